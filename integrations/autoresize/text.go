package autoresize

import (
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/assess"
)

// Request is one pull request's worth: what grows and why.
type Request struct {
	StatefulSet types.NamespacedName
	Source      v1alpha1.Source
	Growths     []Growth
	// Growth is what the proposal adds to the namespace's quotas, by
	// quota resource (assess.Growth); Quotas the namespace's quotas'
	// hard limits and use of the same resources, as text.
	Growth assess.Growth
	Quotas []string
	// Context is the commit status context the merge commit gets.
	Context string
	// GrownNow are the claims grown now, before the merge, once the pull
	// request says so (the emergency path).
	GrownNow []string
	// ChartBump is the chart's version the pull request bumps, so that
	// the merge takes effect (BumpChart); nil when it bumps none.
	ChartBump *ChartBump
}

// Title is the pull request's title.
func (r Request) Title() string {
	return fmt.Sprintf("Grow %s: %s (claimwarden autoresize)", r.StatefulSet, r.sizes())
}

// Message is the commit's message.
func (r Request) Message() string {
	return fmt.Sprintf("autoresize: grow %s %s\n\nProposed by claimwarden from the volumes' usage; see the pull request.", r.StatefulSet, r.sizes())
}

// templatesText names the grown templates, e.g. "volumeClaimTemplates `data` and `logs`".
func templatesText(growths []Growth) string {
	names := make([]string, len(growths))
	for i, g := range growths {
		names[i] = "`" + g.Template + "`"
	}
	if len(names) == 1 {
		return "volumeClaimTemplate " + names[0]
	}
	return "volumeClaimTemplates " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func (r Request) sizes() string {
	var parts []string
	for _, g := range r.Growths {
		parts = append(parts, fmt.Sprintf("%s %s → %s", g.Template, g.From.String(), g.To.String()))
	}
	return strings.Join(parts, ", ")
}

// Body is the pull request's description (Markdown): the claims, their
// usage and forecast, the policies' words, the quota effect and what
// happens on merge.
func (r Request) Body() string {
	var b strings.Builder
	fmt.Fprintf(&b, "claimwarden proposes growing the volumes of StatefulSet `%s` before they fill.\n\n", r.StatefulSet)
	b.WriteString("| Claim | Used | Capacity | Growth | Full in | Proposed |\n|---|---|---|---|---|---|\n")
	for _, g := range r.Growths {
		for _, c := range g.Claims {
			u := c.Usage
			fmt.Fprintf(&b, "| `%s` | %s (%.0f%%) | %s | %s | %s | %s |\n", c.Name, bytesText(u.UsedBytes), 100*u.UsedFraction(),
				bytesText(u.CapacityBytes), rateText(u.GrowthBytesPerSecond), fullText(u.TimeToFull()), bytesText(c.ToBytes))
		}
	}
	b.WriteString("\n**Policies**\n\n")
	for _, g := range r.Growths {
		for _, c := range g.Claims {
			for _, m := range c.Messages {
				fmt.Fprintf(&b, "- %s\n", m)
			}
		}
	}
	b.WriteString("\nEvery claim change of the new size was asked of the policies as any proposal is, and allowed.\n")
	// Edits that would move anything else are refused before this (the
	// chart rendered, or the manifest read, as the merge leaves it).
	fmt.Fprintf(&b, "\n**What the merge grows**: only %s of StatefulSet `%s`; the edited files were checked as the merge leaves them (a chart rendered), and they change no other template, StatefulSet or object.\n",
		templatesText(r.Growths), r.StatefulSet)
	if len(r.Growth) > 0 {
		b.WriteString("\n**Quota**: the claims grow ")
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(r.Growth)) {
			parts = append(parts, fmt.Sprintf("`%s` by %s", k, amountText(k, r.Growth[k])))
		}
		b.WriteString(strings.Join(parts, ", ") + ".")
		if len(r.Quotas) > 0 {
			b.WriteString(" Namespace quotas now: " + strings.Join(r.Quotas, "; ") + ".")
		}
		b.WriteString("\n")
	}
	if len(r.GrownNow) > 0 {
		fmt.Fprintf(&b, "\n**Grown now**: the claims `%s` fill sooner than this pull request can be merged (`autoresize_emergency_seconds`), so claimwarden grows them now, as this pull request says, before the merge. A claim larger than its template is compatible; merging makes Git say what the cluster has.\n",
			strings.Join(r.GrownNow, "`, `"))
	}
	applies := "applies the new size"
	if c := r.ChartBump; c != nil {
		fmt.Fprintf(&b, "\n**Chart version**: `%s` goes from %s to %s. %s packages its chart anew only when the chart's version changes (`reconcileStrategy: ChartVersion`, Flux's default): without the bump the merge would change nothing.\n",
			c.ChartFile, c.From, c.To, toolText(r.Source))
		applies = "upgrades to chart version " + c.To + " with the new size"
	}
	// Only what claimwarden does is promised: the tool's apply may roll the
	// Pods for another change of the same merge (a chart's version label).
	fmt.Fprintf(&b, "\n**On merge**: %s %s; claimwarden re-creates the StatefulSet with it (orphaning its Pods), grows each claim in place, and posts the commit status `%s` on the merge commit. claimwarden restarts no Pod; whether the apply of the merge rolls them depends on what else the merge changes in the Pod template.\n", toolText(r.Source), applies, r.Context)
	b.WriteString("\nThis pull request is updated in place while it is open. Closing it unmerged pauses autoresize of this StatefulSet for the cooldown (`autoresize_cooldown_seconds`).\n")
	return b.String()
}

// byVersionText says, where Git sets the size already, why the tool may
// not apply it: Flux packages a chart in Git anew only with a new version.
func byVersionText(w Where) string {
	if w.ChartByVersion == nil {
		return ""
	}
	return fmt.Sprintf(" (HelmRelease %s takes a change of its chart's files only with a new version in %s: if the size in a values file came without one, bump it)", w.ChartByVersion, path.Join(w.Chart, "Chart.yaml"))
}

func toolText(s v1alpha1.Source) string {
	if s.Namespace == "" {
		return s.Kind + " " + s.Name
	}
	return fmt.Sprintf("%s %s/%s", s.Kind, s.Namespace, s.Name)
}

// bytesText is n in binary units, e.g. 8.5Gi.
func bytesText(n int64) string {
	units := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if f == math.Trunc(f) {
		return fmt.Sprintf("%.0f%s", f, units[i])
	}
	return fmt.Sprintf("%.1f%s", f, units[i])
}

func rateText(perSecond float64) string {
	if perSecond <= 0 {
		return "—"
	}
	return bytesText(int64(perSecond*86400)) + "/day"
}

func fullText(d time.Duration, ok bool) string {
	if !ok {
		return "—"
	}
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%.0f days", d.Hours()/24)
	case d >= time.Hour:
		return fmt.Sprintf("%.0fh", d.Hours())
	}
	return fmt.Sprintf("%.0fm", math.Ceil(d.Minutes()))
}

// amountText is a quota resource's amount: bytes for storage, a count
// for claims.
func amountText(resourceName string, n int64) string {
	if strings.HasSuffix(resourceName, "storage") {
		return bytesText(n)
	}
	return resource.NewQuantity(n, resource.DecimalSI).String()
}
