package check

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/commitstatus"
	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/assess"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/gate"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// evaluator holds what the evaluation of every StatefulSet shares.
type evaluator struct {
	policies policies.Evaluator
	// cur is the current state; after is it with the proposal's own
	// cluster objects applied (cur itself when it has none).
	cur, after    *current
	strategy      v1alpha1.UpdateStrategy
	repository    string
	revision      string
	contextPrefix string
	// ignoredLabels are, by file, the template label keys a kustomize
	// build injects: never copied onto claims, so no claim change.
	ignoredLabels map[string][]string
	// noun names what the proposal was compared with, in notes.
	noun string
	// prices cost the claims; defaultClass is the class new claims that
	// name none get.
	prices       Prices
	defaultClass string
}

// one compares one proposed StatefulSet with the current state and
// assesses it as the controller will (assess.Assess).
// inFlight is what the proposal's other StatefulSets of its namespace
// grow: merged together, they are in flight together.
func (e *evaluator) one(ctx context.Context, p manifests.StatefulSet, inFlight assess.Growth) (StatefulSet, error) {
	r := StatefulSet{Namespace: p.Namespace, Name: p.Name, File: p.File, Line: p.Line}
	live, done, err := e.prepare(p, &r)
	if err != nil || done {
		return r, err
	}
	in, claims, err := e.input(p, live)
	if err != nil {
		return r, fmt.Errorf("%s: %w", p.Location, err)
	}
	in.InFlight = inFlight
	a, err := assess.Assess(ctx, e.policies, in)
	if err != nil {
		return r, fmt.Errorf("%s: %w", p.Location, err)
	}
	r.NewClaims = newReplicas(live, p.StatefulSet, claims)
	for _, c := range a.Diff.Claims {
		if c.Missing {
			r.NewClaims++
		}
	}
	r.TemplatesAdded, r.TemplatesRemoved = a.Diff.TemplatesAdded, a.Diff.TemplatesRemoved
	r.Cost = e.cost(p.StatefulSet, firstOrdinal(live), claims, a.Diff.Claims)
	e.render(&r, a, live)
	return r, nil
}

// prepare reads what the controller reads before it assesses: the live
// StatefulSet, its annotations, whether it manages it at all. done says r
// is complete: ignored, new, or with templates as they are.
func (e *evaluator) prepare(p manifests.StatefulSet, r *StatefulSet) (live *appsv1.StatefulSet, done bool, err error) {
	sts := p.StatefulSet
	if live, err = e.cur.statefulSet(sts.Namespace + "/" + sts.Name); err != nil {
		return nil, true, fmt.Errorf("%s: %w", p.Location, err)
	}
	// The controller reads its annotations from the live StatefulSet; a new
	// one is created as proposed.
	current := cmp.Or(live, sts)
	strategy, err := plan.StrategyOf(current, e.strategy)
	if err == nil && live != nil {
		// Once applied, a bad annotation stalls the rollout.
		_, err = plan.StrategyOf(sts, e.strategy)
	}
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", p.Location, err)
	}
	r.Strategy = string(strategy)
	if live != nil {
		r.Notes = annotationChanges(live, sts, e.noun)
	}
	if why := plan.SkipReason(current); why != "" {
		if current.Annotations[v1alpha1.IgnoreAnnotation] == "true" {
			why += ": claimwarden leaves it alone"
		}
		r.Status, r.Notes = StatusIgnored, append(r.Notes, why)
		return nil, true, nil
	}
	// The controller's bound on claims per StatefulSet, on the proposal: one
	// that asks for more would stall its rollout once applied.
	if _, _, err := diff.Ordinals(sts, diff.DefaultMaxClaims); err != nil {
		return nil, true, fmt.Errorf("%s: %w", p.Location, err)
	}
	switch {
	case live == nil:
		r.Status = StatusNew
		r.NewClaims = len(sts.Spec.VolumeClaimTemplates) * int(*sts.Spec.Replicas)
		r.Notes = append(r.Notes, "not in the "+e.noun+": the StatefulSet controller creates its claims from the templates")
		r.Cost = e.cost(sts, firstOrdinal(sts), nil, nil)
		return nil, true, nil
	case diff.TemplatesEqual(live.Spec.VolumeClaimTemplates, sts.Spec.VolumeClaimTemplates):
		// Nothing for the controller to gate: what it does with the claims
		// as they are is not this change's doing.
		claims, err := e.claimsOf(live, min(firstOrdinal(live), firstOrdinal(sts)), live)
		if err != nil {
			return nil, true, fmt.Errorf("%s: %w", p.Location, err)
		}
		r.Status = StatusUnchanged
		r.NewClaims = newReplicas(live, sts, claims)
		r.addNewClaimsNote()
		r.Cost = e.cost(sts, firstOrdinal(live), claims, nil)
		return nil, true, nil
	}
	return live, false, nil
}

// input is what the controller assesses for the proposal: the live
// StatefulSet with the proposed templates, re-created to carry them, with
// the policies asked under the current state and, where the proposal's
// cluster objects differ from it, under those too.
func (e *evaluator) input(p manifests.StatefulSet, live *appsv1.StatefulSet) (assess.Input, []corev1.PersistentVolumeClaim, error) {
	desired := plan.WithTemplates(live, p.StatefulSet)
	claims, err := e.claimsOf(desired, min(firstOrdinal(live), firstOrdinal(p.StatefulSet)), live)
	if err != nil {
		return assess.Input{}, nil, err
	}
	source := e.sourceOf(p.StatefulSet)
	c := assess.Cluster{Facts: e.cur.facts(live.Namespace, source), Server: e.cur.server}
	if e.after.asksAgain(live.Namespace) {
		c.Also = []gate.Facts{e.after.facts(live.Namespace, source)}
	}
	s := assess.Settings{MaxClaims: diff.DefaultMaxClaims, MaxConcurrent: 1, DefaultStrategy: e.strategy, LookAhead: true}
	in, err := assess.NewInput(live, desired, claims, e.ignoredLabels[p.File], s, c)
	return in, claims, err
}

// sourceOf names the proposal in the policy input: the flags, else the
// StatefulSet's claimwarden.dev annotations.
func (e *evaluator) sourceOf(sts *appsv1.StatefulSet) policies.Source {
	return policies.Source{
		Kind: "StatefulSet", Namespace: sts.Namespace, Name: sts.Name,
		Repository: cmp.Or(e.repository, sts.Annotations[v1alpha1.RepositoryAnnotation]),
		Revision:   cmp.Or(e.revision, sts.Annotations[v1alpha1.RevisionAnnotation]),
	}
}

// render reports the assessment: the verdicts, the commit status and the
// notes on what waits on purpose.
func (e *evaluator) render(r *StatefulSet, a assess.Assessment, live *appsv1.StatefulSet) {
	changes := make(map[string]diff.ClaimChange, len(a.Diff.Claims))
	for _, c := range a.Diff.Claims {
		changes[c.Name] = c
	}
	for _, ans := range a.Answers.Claims {
		r.Claims = append(r.Claims, claimResult(changes[ans.Claim], ans.Verdict))
	}
	if ans := a.Answers.StatefulSet; ans != nil {
		// The re-create alone, allowed and without warnings, is what every
		// template change takes: not worth a line.
		templatesChange := len(a.Diff.TemplatesAdded)+len(a.Diff.TemplatesRemoved) > 0
		if v := ans.Verdict; templatesChange || !v.Allowed || len(v.Warnings) > 0 {
			r.Templates = &TemplateVerdict{Verdict: verdictOf(v.Allowed), Denials: v.Denials, Warnings: v.Warnings}
		}
	}
	r.Status = StatusUnchanged
	if len(r.Claims) > 0 || r.Templates != nil {
		r.Status, r.Verdict = StatusChanged, verdictOf(!a.Verdict.Denied())
		r.CommitStatus = e.commitStatus(r, a)
	}
	r.addNewClaimsNote()
	if r.Verdict != Allowed {
		return
	}
	// Read from the live StatefulSet, as the controller reads them.
	if note := plan.PartitionOf(live).HeldNote(a.Diff); note != "" {
		r.Notes = append(r.Notes, note)
	}
	if note := plan.OnDeleteNote(live, a.Diff); note != "" {
		r.Notes = append(r.Notes, note)
	}
	if r.Templates != nil && len(a.Diff.TemplatesAdded)+len(a.Diff.TemplatesRemoved) > 0 {
		r.Notes = append(r.Notes, "templates added or removed: the controller reports this and does not act on it")
	}
}

// facts are what the policies read of the state c, from its snapshot.
func (c *current) facts(namespace string, source policies.Source) gate.Facts {
	return gate.Facts{
		Namespace: func(context.Context) (*corev1.Namespace, error) { return c.namespaces[namespace], nil },
		ResourceQuotas: func(context.Context) ([]corev1.ResourceQuota, error) {
			var out []corev1.ResourceQuota
			for _, name := range slices.Sorted(maps.Keys(c.quotas[namespace])) {
				out = append(out, *c.quotas[namespace][name])
			}
			return out, nil
		},
		StorageClass: func(_ context.Context, pvc *corev1.PersistentVolumeClaim) (*storagev1.StorageClass, error) {
			if pvc == nil || pvc.Spec.StorageClassName == nil {
				return nil, nil
			}
			return c.storageClasses[*pvc.Spec.StorageClassName], nil
		},
		Source: source,
	}
}

// newReplicas counts the claims of replicas the proposal adds that do not
// exist yet: the StatefulSet controller creates them from the proposed
// templates.
func newReplicas(live, proposal *appsv1.StatefulSet, claims []corev1.PersistentVolumeClaim) int {
	from := int64(firstOrdinal(live)) + int64(replicasOf(live))
	to := int64(firstOrdinal(live)) + int64(*proposal.Spec.Replicas)
	n := int64(len(proposal.Spec.VolumeClaimTemplates)) * max(0, to-from)
	for _, c := range claims {
		if _, o, ok := diff.SplitOrdinal(c.Name); ok && int64(o) >= from && int64(o) < to {
			n--
		}
	}
	return int(n)
}

func replicasOf(sts *appsv1.StatefulSet) int32 {
	if sts.Spec.Replicas == nil {
		return 1
	}
	return *sts.Spec.Replicas
}

func firstOrdinal(sts *appsv1.StatefulSet) int32 {
	if sts.Spec.Ordinals == nil {
		return 0
	}
	return sts.Spec.Ordinals.Start
}

func (r *StatefulSet) addNewClaimsNote() {
	if r.NewClaims > 0 {
		r.Notes = append(r.Notes, plural(r.NewClaims, "new claim")+", to be created by the StatefulSet controller from the templates")
	}
}

// claimsOf returns the current claims of the StatefulSet's templates, of
// every ordinal from first: those beyond its replicas too, since claims
// outlive the replicas that used them and the controller compares them with
// the templates once the StatefulSet scales up again. Only existing claims
// are looked at, so the work is theirs, not the replicas'. live is the
// current StatefulSet, which base claims are made from.
func (e *evaluator) claimsOf(sts *appsv1.StatefulSet, first int32, live *appsv1.StatefulSet) ([]corev1.PersistentVolumeClaim, error) {
	inNS, byStem := e.cur.claims[sts.Namespace], e.cur.ordinals[sts.Namespace]
	// A base StatefulSet whose claims are named alike (template "b-c" of
	// "a", template "b" of "c-a") is typed once.
	owners := map[string]*appsv1.StatefulSet{live.Namespace + "/" + live.Name: live}
	var out []corev1.PersistentVolumeClaim
	for i := range sts.Spec.VolumeClaimTemplates {
		t := sts.Spec.VolumeClaimTemplates[i].Name
		for _, o := range slices.Sorted(slices.Values(byStem[t+"-"+sts.Name])) {
			if o < first {
				continue
			}
			pvc, err := e.cur.pvc(inNS[diff.ClaimName(t, sts.Name, o)], owners)
			if err != nil {
				return nil, err
			}
			out = append(out, *pvc)
		}
	}
	return out, nil
}

// annotationChanges notes a proposal that changes the annotations the
// controller reads from the live StatefulSet: they apply from the next
// change on, so this one is checked with the current ones.
func annotationChanges(live, proposal *appsv1.StatefulSet, noun string) []string {
	var out []string
	for _, key := range []string{v1alpha1.IgnoreAnnotation, v1alpha1.UpdateStrategyAnnotation} {
		was, wasSet := live.Annotations[key]
		is, isSet := proposal.Annotations[key]
		if was == is && wasSet == isSet {
			continue
		}
		out = append(out, fmt.Sprintf("the proposal changes annotation %s from %s to %s: the controller reads it from the live StatefulSet, so it applies after this change, which is checked with the %s's",
			key, quoteOrUnset(optional(was, wasSet)), quoteOrUnset(optional(is, isSet)), noun))
	}
	return out
}

func optional(v string, set bool) *string {
	if !set {
		return nil
	}
	return &v
}

// claimResult renders one claim's verdict.
func claimResult(c diff.ClaimChange, v policies.Verdict) Claim {
	out := Claim{
		Name: c.Name, Template: c.Template, Ordinal: c.Ordinal,
		From: c.RequestFrom.String(), To: c.TemplateRequest.String(),
		FromBytes: c.RequestFrom.Value(), ToBytes: c.TemplateRequest.Value(),
		Changes: describeChanges(c), Verdict: verdictOf(v.Allowed),
		Denials: v.Denials, Warnings: v.Warnings,
	}
	if slices.ContainsFunc(v.Denials, func(r policies.Reason) bool { return r.Policy == assess.ImmutablePolicy }) {
		out.Changes = out.Changes[:len(out.Changes)-len(c.Immutable)] // the denial names them
	}
	return out
}

// describeChanges lists, for people, what differs besides the storage
// request; the immutable fields come last.
func describeChanges(c diff.ClaimChange) []string {
	var out []string
	if c.Recovery {
		// The one smaller template the controller applies (see diff's Recovery).
		out = append(out, fmt.Sprintf("recovers from the failed expansion to %s: the request is lowered, above the capacity %s", c.RequestFrom.String(), c.Capacity.String()))
	}
	if c.VACTo != nil && (c.VACFrom == nil || *c.VACFrom != *c.VACTo) {
		out = append(out, fmt.Sprintf("volume attributes class %s → %q", quoteOrUnset(c.VACFrom), *c.VACTo))
	}
	if c.VACUnsupported != nil {
		// The controller reports it the same way and does not wait for it.
		out = append(out, fmt.Sprintf("volume attributes class %q not applied: the cluster's API server serves no VolumeAttributesClasses", *c.VACUnsupported))
	}
	if len(c.Labels) > 0 {
		out = append(out, "labels "+keyList(c.Labels))
	}
	if len(c.Annotations) > 0 {
		out = append(out, "annotations "+keyList(c.Annotations))
	}
	for _, m := range c.Immutable {
		out = append(out, fmt.Sprintf("%s %s → %s", m.Field, m.Live, m.Desired))
	}
	return out
}

// commitStatus is the status --post-status posts: failure with the
// assessment's denial, in the words of the controller's commit status, or
// success summing up what changes.
func (e *evaluator) commitStatus(r *StatefulSet, a assess.Assessment) *CommitStatus {
	s := &CommitStatus{Context: commitstatus.StatusContext(e.contextPrefix, r.Namespace, r.Name), State: string(commitstatus.Success)}
	if denial := a.Denial(); denial != "" {
		s.State, s.Description = string(commitstatus.Failure), denial
	} else {
		s.Description = "allowed: " + sizeSummary(r.Claims)
	}
	s.Description = outcome.ShortDescription(s.Description)
	return s
}

// sizeSummary says what the claims become, e.g. "3 claims, data 10Gi → 15Gi".
func sizeSummary(claims []Claim) string {
	var steps []string
	seen := map[string]bool{}
	for _, c := range claims {
		step := c.Template + " " + c.From + " → " + c.To
		if c.From == c.To {
			step = c.Template + " " + strings.Join(c.Changes, ", ")
		}
		if !seen[step] {
			seen[step] = true
			steps = append(steps, step)
		}
	}
	return fmt.Sprintf("%s, %s", plural(len(claims), "claim"), strings.Join(steps, "; "))
}

func verdictOf(allowed bool) string {
	if allowed {
		return Allowed
	}
	return Denied
}
