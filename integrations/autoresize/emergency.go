package autoresize

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/claimwarden/claimwarden/reconciler/authority"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
)

// ReasonGrownNow is the event of a claim grown before its pull request is
// merged (the emergency path).
const ReasonGrownNow = "AutoresizeGrownNow"

// planNow is the emergency path's plan: the claims whose proposal said
// now (the volume fills sooner than a person can merge) grow at once to
// their template's new size, once the pull request says it. A claim larger
// than its template is compatible (KEP-4650), so neither the rollout nor
// the tool fights it. Every patch must be one the tool's identity may make
// (authority): when one is not, nothing grows now and the error says why;
// the growths were allowed by the policies as the merge's proposal
// (Decide). held are the claims ahead of their template that held a growth
// back (nowGrowths).
func (j *job) planNow(ctx context.Context, growths []Growth) (now []nowGrowth, held []string, err error) {
	now, held = nowGrowths(j.sts, j.claims, growths)
	if id := j.src.Authority; id != nil && len(now) > 0 {
		writes := make([]authority.Write, len(now))
		for i, g := range now {
			writes[i] = authority.PatchClaim(j.sts.Namespace, g.name)
		}
		if err := j.c.Authority.Check(ctx, *id, writes); err != nil {
			return nil, held, fmt.Errorf("growing the claims now: %w", err)
		}
	}
	return now, held, nil
}

// growNow grows the claims of now through the rollout's writer, which
// never shrinks one, and returns those grown, each told in an event.
func (j *job) growNow(ctx context.Context, now []nowGrowth) (grown []string, err error) {
	if len(now) == 0 {
		return nil, nil
	}
	growths := make([]rollout.Growth, len(now))
	to := make(map[string]string, len(now))
	for i, g := range now {
		growths[i] = rollout.Growth{Claim: g.name, To: g.to}
		to[g.name] = g.to.String()
	}
	grown, err = j.c.Writer.GrowNow(ctx, j.sts, growths)
	for _, name := range grown {
		j.c.Log.Info("grew a claim before its pull request is merged", "statefulset", keyOf(j.sts), "pvc", name, "to", to[name])
		j.c.Recorder.Eventf(j.sts, nil, j.src.Source, corev1.EventTypeWarning, ReasonGrownNow, "Autoresize",
			"grew claim %s to %s before the pull request is merged: its volume fills sooner than a merge", name, to[name])
	}
	return grown, err
}

// saysNow reports whether the open pull request of key says already that
// the claims names grow now (none need saying): a growth that failed is
// tried again without proposing again, which would push and edit the pull
// request, a notification to its reviewers per check. Remembered in
// memory only: after a restart the pull request is proposed once more.
func (c *Controller) saysNow(key string, names []string) bool {
	v, _ := c.saidNow.Load(key)
	said, _ := v.([]string)
	for _, n := range names {
		if !slices.Contains(said, n) {
			return false
		}
	}
	return true
}

// sayNow remembers that the pull request of key says names grow now.
func (c *Controller) sayNow(key string, names []string) {
	c.saidNow.Store(key, slices.Clone(names))
}

// nowGrowth is one claim the emergency path grows, and to what.
type nowGrowth struct {
	name string
	to   resource.Quantity
}

// nowGrowths are the claims to grow now: those a policy asked to grow now
// whose request is below their template's new size, of templates none of
// whose claims is larger than the template already. Claims lead Git by one
// pull request at most: grown again before the StatefulSet has the size
// merged last, they would be larger than that size when the tool applies
// it, which increase-only denies, and the merge would never be applied
// (and a rate measured across a jump in usage would grow them at every
// check while the pull request is open). held are those ahead claims, of
// templates that would have grown now.
func nowGrowths(sts *appsv1.StatefulSet, claims []corev1.PersistentVolumeClaim, growths []Growth) (todo []nowGrowth, held []string) {
	for _, g := range growths {
		var grow []nowGrowth
		for _, c := range g.Claims {
			if req := requestOf(claims, c.Name); c.Now && req.Cmp(g.To) < 0 {
				grow = append(grow, nowGrowth{c.Name, g.To})
			}
		}
		if len(grow) == 0 {
			continue
		}
		if ahead := aheadOf(sts, claims, g.Template); len(ahead) > 0 {
			held = append(held, ahead...)
			continue
		}
		todo = append(todo, grow...)
	}
	return todo, held
}

// aheadOf are the claims of sts's template (every template when template
// is "") that request more than it: grown before a merge the StatefulSet
// does not have yet.
func aheadOf(sts *appsv1.StatefulSet, claims []corev1.PersistentVolumeClaim, template string) []string {
	var out []string
	for _, pvc := range claims {
		t, ok := diff.TemplateOf(pvc.Name, sts.Name)
		if !ok || (template != "" && t != template) {
			continue
		}
		size := templateSize(sts, t)
		if req := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; !size.IsZero() && req.Cmp(size) > 0 {
			out = append(out, pvc.Name)
		}
	}
	return out
}

// heldText says which claims the emergency path did not grow, and why.
func heldText(held []string) string {
	if len(held) == 0 {
		return ""
	}
	return fmt.Sprintf("; not grown now: %s larger than the template already, until the StatefulSet has the size merged last",
		strings.Join(held, ", "))
}

// requestOf is the storage request of claim name among claims.
func requestOf(claims []corev1.PersistentVolumeClaim, name string) resource.Quantity {
	for _, c := range claims {
		if c.Name == name {
			return c.Spec.Resources.Requests[corev1.ResourceStorage]
		}
	}
	return resource.Quantity{}
}
