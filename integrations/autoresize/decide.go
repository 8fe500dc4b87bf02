package autoresize

import (
	"context"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/claimwarden/claimwarden/integrations/usage"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/assess"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/gate"
	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// State is what autoresize decides on for one StatefulSet.
type State struct {
	// Live is the StatefulSet as it runs; Claims its claims.
	Live   *appsv1.StatefulSet
	Claims []corev1.PersistentVolumeClaim
	// Usage is the claims' usage by claim name (claims the kubelets do
	// not report are not asked about, nor claims whose usage cannot be
	// decided on: Undecided).
	Usage map[string]usage.Usage
	// SinceLast is how long ago a resize of the StatefulSet was last
	// proposed or its pull request closed; nil when never.
	SinceLast *time.Duration
	// Settings and Cluster are what the rollout assesses the StatefulSet's
	// proposals with (Rollout.Ahead): the grown templates are decided as
	// the rollout will decide them once merged.
	Settings assess.Settings
	Cluster  assess.Cluster
}

// Growth is what the policies propose for one claim template: the
// largest size proposed for any of its claims.
type Growth struct {
	Template string
	// Index is the template's place in spec.volumeClaimTemplates.
	Index    int
	From, To resource.Quantity
	// Claims are the claims whose proposals it is, with their usage and
	// the policies' words.
	Claims []ClaimGrowth
}

// ClaimGrowth is one claim's usage and what the policies proposed for it.
type ClaimGrowth struct {
	Name    string
	Usage   usage.Usage
	ToBytes int64
	// Messages are the resize proposals' messages and the warnings.
	Messages []string
	// Now says a policy asked to grow the claim at once, before the
	// merge (the emergency path).
	Now bool
}

// Propose asks the autoresize question about every claim of s with usage
// and returns, per template, the size the policies propose (nil when
// none grows). A verdict that denies (a policy that cannot be evaluated)
// proposes nothing for its claim, and its denial is returned in denied.
func Propose(ctx context.Context, ev policies.Evaluator, s State) (growths []Growth, denied []string, err error) {
	questions, err := questions(s)
	if err != nil || len(questions) == 0 {
		return nil, nil, err
	}
	answers, err := gate.Ask(ctx, ev, questions, s.Cluster.Facts)
	if err != nil {
		return nil, nil, err
	}
	byTemplate := map[string]*Growth{}
	for _, a := range answers.Claims {
		if !a.Verdict.Allowed {
			denied = append(denied, fmt.Sprintf("%s: %s", a.Claim, plan.DenialText(a.Verdict.Denials)))
			continue
		}
		c := ClaimGrowth{Name: a.Claim, Usage: current(s.Usage[a.Claim], a.PVC)}
		for _, r := range a.Verdict.Resizes {
			c.ToBytes = max(c.ToBytes, r.ToBytes)
			c.Messages = append(c.Messages, r.Message)
			c.Now = c.Now || r.Now
		}
		if c.ToBytes == 0 {
			continue
		}
		for _, w := range a.Verdict.Warnings {
			c.Messages = append(c.Messages, "warning: "+w.Message)
		}
		t := a.Input.Change.Template
		g := byTemplate[t]
		if g == nil {
			g = &Growth{Template: t, Index: templateIndex(s.Live, t), From: templateSize(s.Live, t)}
			byTemplate[t] = g
		}
		g.Claims = append(g.Claims, c)
		if c.ToBytes > g.To.Value() {
			g.To = *resource.NewQuantity(c.ToBytes, resource.BinarySI)
		}
	}
	for _, g := range byTemplate {
		if g.To.Cmp(g.From) > 0 {
			growths = append(growths, *g)
		}
	}
	slices.SortFunc(growths, func(a, b Growth) int { return a.Index - b.Index })
	return growths, denied, nil
}

// questions are the autoresize questions of s: one per claim of a
// template whose volume the kubelet reports, in a way that can be decided
// on (Undecided), and whose resize is not in flight.
func questions(s State) ([]plan.Question, error) {
	claims, err := reported(s)
	if err != nil {
		return nil, err
	}
	var out []plan.Question
	for _, c := range claims {
		if against(c.usage, c.pvc) != "" {
			continue
		}
		out = append(out, plan.Question{Claim: c.slot.name, PVC: c.pvc, Input: policies.Input{
			Change: policies.Change{
				Kind: policies.KindAutoresize, Namespace: s.Live.Namespace, StatefulSet: s.Live.Name,
				Claim: c.slot.name, Template: c.slot.template.Name, Ordinal: c.slot.ordinal,
			},
			PVC: c.pvc, Template: c.slot.template, StatefulSet: s.Live, Server: s.Cluster.Server,
			Autoresize: autoresizeInput(c.pvc, current(c.usage, c.pvc), s.SinceLast),
		}})
	}
	return out, nil
}

// Undecided are the claims of s the kubelets report in a way that cannot
// be decided on, each with why ("data-web-0: ..."): several series that
// disagree, or a capacity that is not the claim's. Claims resizing are not
// among them: they are not asked about anyway.
func Undecided(s State) ([]string, error) {
	claims, err := reported(s)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range claims {
		if why := against(c.usage, c.pvc); why != "" {
			out = append(out, c.slot.name+": "+why)
		}
	}
	return out, nil
}

// reportedClaim is a claim of s that exists, whose usage the kubelets
// report, and whose resize is not in flight.
type reportedClaim struct {
	slot  claimSlot
	pvc   *corev1.PersistentVolumeClaim
	usage usage.Usage
}

// reported are the claims of s's templates and ordinals, in order, that
// exist, are reported and are not resizing.
func reported(s State) ([]reportedClaim, error) {
	slots, err := claimSlots(s.Live, s.Settings.MaxClaims)
	if err != nil {
		return nil, err
	}
	byName := map[string]*corev1.PersistentVolumeClaim{}
	for i := range s.Claims {
		byName[s.Claims[i].Name] = &s.Claims[i]
	}
	var out []reportedClaim
	for _, slot := range slots {
		pvc := byName[slot.name]
		u, ok := s.Usage[slot.name]
		if pvc == nil || !ok || resizing(pvc) {
			continue
		}
		out = append(out, reportedClaim{slot: slot, pvc: pvc, usage: u})
	}
	return out, nil
}

// against is why u cannot be decided on for pvc (usage.Usage.Against its
// status.capacity); "" when it can.
func against(u usage.Usage, pvc *corev1.PersistentVolumeClaim) string {
	c := pvc.Status.Capacity[corev1.ResourceStorage]
	return u.Against(c.Value())
}

// claimSlot is a claim a StatefulSet's template and ordinal make.
type claimSlot struct {
	name     string
	template *corev1.PersistentVolumeClaim
	ordinal  int32
}

// claimSlots are the claims sts's templates make for its ordinals
// (diff.Ordinals: spec.ordinals.start, and at most maxClaims), template by
// template.
func claimSlots(sts *appsv1.StatefulSet, maxClaims int) ([]claimSlot, error) {
	start, count, err := diff.Ordinals(sts, maxClaims)
	if err != nil {
		return nil, err
	}
	var out []claimSlot
	for i := range sts.Spec.VolumeClaimTemplates {
		tmpl := &sts.Spec.VolumeClaimTemplates[i]
		for ord := start; ord < start+count; ord++ {
			out = append(out, claimSlot{name: diff.ClaimName(tmpl.Name, sts.Name, ord), template: tmpl, ordinal: ord})
		}
	}
	return out, nil
}

// resizing reports whether a claim's request is above its capacity: a
// resize is in flight, and what the kubelet reports is of the smaller
// volume. Asked now, the policies would grow it again on top of the
// request (the runaway of an autoresizer that does not wait).
func resizing(pvc *corev1.PersistentVolumeClaim) bool {
	req := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	capacity, ok := pvc.Status.Capacity[corev1.ResourceStorage]
	return !ok || req.Cmp(capacity) > 0
}

// current is u with the claim's capacity when the API server reports a
// larger one than the kubelet's last sample (a resize finished since the
// scrape): the fullness is of the volume as it is.
func current(u usage.Usage, pvc *corev1.PersistentVolumeClaim) usage.Usage {
	if c, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok && c.Value() > u.CapacityBytes {
		u.CapacityBytes = c.Value()
	}
	return u
}

func autoresizeInput(pvc *corev1.PersistentVolumeClaim, u usage.Usage, sinceLast *time.Duration) *policies.Autoresize {
	a := &policies.Autoresize{
		CapacityBytes: u.CapacityBytes, UsedBytes: u.UsedBytes, Inodes: u.Inodes, InodesUsed: u.InodesUsed,
		GrowthBytesPerSecond: u.GrowthBytesPerSecond,
	}
	if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
		a.RequestBytes = q.Value()
	}
	if d, ok := u.TimeToFull(); ok {
		secs := d.Seconds()
		a.SecondsToFull = &secs
	}
	if sinceLast != nil {
		secs := sinceLast.Seconds()
		a.SecondsSinceLastProposal = &secs
	}
	return a
}

func templateIndex(sts *appsv1.StatefulSet, name string) int {
	return slices.IndexFunc(sts.Spec.VolumeClaimTemplates, func(t corev1.PersistentVolumeClaim) bool { return t.Name == name })
}

func templateSize(sts *appsv1.StatefulSet, name string) resource.Quantity {
	if i := templateIndex(sts, name); i >= 0 {
		return sts.Spec.VolumeClaimTemplates[i].Spec.Resources.Requests[corev1.ResourceStorage]
	}
	return resource.Quantity{}
}

// Decision is what autoresize decides for one StatefulSet.
type Decision struct {
	// Growths are the templates to grow; none when nothing needs to.
	Growths []Growth
	// Denied are the autoresize questions a policy denied (one that
	// could not be evaluated): their claims propose nothing.
	Denied []string
	// Undecided are the claims not asked about for what the kubelets
	// report of them, each with why (Undecided).
	Undecided []string
	// Assessment is the grown templates asked as any proposal is (the
	// StatefulSet re-created to carry them, every claim patched); zero
	// without growths. A pull request is opened only when it denies
	// nothing.
	Assessment assess.Assessment
}

// Decide asks the autoresize questions about s and then the grown
// templates as a proposal, as the rollout will once the pull request is
// merged: max-step, quota-fits and the organisation's rules decide over the
// whole proposal before a pull request asks a person to merge it.
func Decide(ctx context.Context, ev policies.Evaluator, s State, ignoredLabels []string) (Decision, error) {
	undecided, err := Undecided(s)
	if err != nil {
		return Decision{}, err
	}
	growths, denied, err := Propose(ctx, ev, s)
	if err != nil || len(growths) == 0 {
		return Decision{Denied: denied, Undecided: undecided}, err
	}
	in, err := assess.NewInput(s.Live, Grown(s.Live, growths), s.Claims, ignoredLabels, s.Settings, s.Cluster)
	if err != nil {
		return Decision{}, err
	}
	a, err := assess.Assess(ctx, ev, in)
	if err != nil {
		return Decision{}, err
	}
	return Decision{Growths: growths, Denied: denied, Undecided: undecided, Assessment: a}, nil
}

// Grown is live with every growth's template at its new size: the
// proposal the pull request makes, asked as any proposal is.
func Grown(live *appsv1.StatefulSet, growths []Growth) *appsv1.StatefulSet {
	out := live.DeepCopy()
	for _, g := range growths {
		t := &out.Spec.VolumeClaimTemplates[g.Index]
		if t.Spec.Resources.Requests == nil {
			t.Spec.Resources.Requests = corev1.ResourceList{}
		}
		t.Spec.Resources.Requests[corev1.ResourceStorage] = g.To
	}
	return out
}
