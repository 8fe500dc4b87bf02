package check

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/utils/ptr"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/gitstatus"
	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/gate"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// ImmutablePolicy is the policy id of the denial check adds when a claim
// differs from its template in a field no patch can change and no policy
// denied it: the controller leaves such a claim alone and stalls
// (ImmutableFieldChanged), so the change cannot be rolled out as proposed.
const ImmutablePolicy = "immutable-field"

// evaluator holds what the evaluation of every StatefulSet shares.
type evaluator struct {
	policies      policies.Evaluator
	cur           *current
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

// all evaluates every StatefulSet, in parallel (the engine is safe for
// concurrent use), keeping input order. Each proposal is let go once
// evaluated, as the results take its place.
func (e *evaluator) all(ctx context.Context, sets []proposal) ([]StatefulSet, error) {
	out := make([]StatefulSet, len(sets))
	errs := make([]error, len(sets))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				p, err := sets[i].typed()
				if err != nil {
					errs[i] = fmt.Errorf("%s: %w", sets[i].Location, err)
					continue
				}
				sets[i].json = nil
				out[i], errs[i] = e.one(ctx, p)
			}
		})
	}
	for i := range sets {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// one compares one proposed StatefulSet with the current state and asks
// the policies what the controller would ask them.
func (e *evaluator) one(ctx context.Context, p manifests.StatefulSet) (StatefulSet, error) {
	sts := p.StatefulSet
	r := StatefulSet{Namespace: sts.Namespace, Name: sts.Name, File: p.File, Line: p.Line}
	live, err := e.cur.statefulSet(sts.Namespace + "/" + sts.Name)
	if err != nil {
		return r, fmt.Errorf("%s: %w", p.Location, err)
	}
	// The controller reads its annotations from the live StatefulSet; a new
	// one is created as proposed.
	current := sts
	if live != nil {
		current = live
	}
	strategy, err := plan.StrategyOf(current, e.strategy)
	if err == nil && live != nil {
		// Once applied, a bad annotation stalls the rollout.
		_, err = plan.StrategyOf(sts, e.strategy)
	}
	if err != nil {
		return r, fmt.Errorf("%s: %w", p.Location, err)
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
		return r, nil
	}
	// The controller's bound on claims per StatefulSet, on the proposal: one
	// that asks for more would stall its rollout once applied.
	if _, _, err := diff.Ordinals(sts, diff.DefaultMaxClaims); err != nil {
		return r, fmt.Errorf("%s: %w", p.Location, err)
	}
	if live == nil {
		r.Status = StatusNew
		r.NewClaims = len(sts.Spec.VolumeClaimTemplates) * int(*sts.Spec.Replicas)
		r.Notes = append(r.Notes, "not in the "+e.noun+": the StatefulSet controller creates its claims from the templates")
		r.Cost = e.cost(sts, firstOrdinal(sts), nil, nil)
		return r, nil
	}

	// As the controller does with a GitOps proposal: the current StatefulSet
	// with the proposed templates, compared with the current templates.
	desired := plan.WithTemplates(live, sts)
	claims, err := e.claimsOf(desired, min(firstOrdinal(live), firstOrdinal(sts)), live)
	if err != nil {
		return r, fmt.Errorf("%s: %w", p.Location, err)
	}
	if diff.TemplatesEqual(live.Spec.VolumeClaimTemplates, sts.Spec.VolumeClaimTemplates) {
		// Nothing for the controller to gate: what it does with the claims
		// as they are is not this change's doing.
		r.Status = StatusUnchanged
		r.NewClaims = newReplicas(live, sts, claims)
		r.addNewClaimsNote()
		r.Cost = e.cost(sts, firstOrdinal(live), claims, nil)
		return r, nil
	}
	in := diff.Input{Desired: desired, LiveTemplates: diff.LiveTemplatesOf(live), PVCs: claims, IgnoreLabels: e.ignoredLabels[p.File], MaxClaims: diff.DefaultMaxClaims}
	res, err := compareAll(in)
	if err != nil {
		return r, fmt.Errorf("%s: %w", p.Location, err)
	}
	byName := make(map[string]*corev1.PersistentVolumeClaim, len(claims))
	for i := range claims {
		byName[claims[i].Name] = &claims[i]
	}
	r.NewClaims = newReplicas(live, sts, claims)
	for _, c := range res.Claims {
		if c.Missing {
			r.NewClaims++
		}
	}
	r.TemplatesAdded, r.TemplatesRemoved = res.TemplatesAdded, res.TemplatesRemoved
	r.Cost = e.cost(sts, firstOrdinal(live), claims, res.Claims)

	// The templates differ, so the controller re-creates the StatefulSet
	// to carry them: ask that question too, as it will.
	questions := plan.Questions(desired, res, byName, true)
	changes := make(map[string]diff.ClaimChange, len(res.Claims))
	for _, c := range res.Claims {
		changes[c.Name] = c
	}
	source := policies.Source{Kind: "StatefulSet", Namespace: sts.Namespace, Name: sts.Name, Repository: e.repository, Revision: e.revision}
	if source.Repository == "" {
		source.Repository = sts.Annotations[v1alpha1.RepositoryAnnotation]
	}
	if source.Revision == "" {
		source.Revision = sts.Annotations[v1alpha1.RevisionAnnotation]
	}
	ans, err := gate.Ask(ctx, e.policies, questions, e.facts(sts.Namespace, source))
	if err != nil {
		return r, fmt.Errorf("%s: %w", p.Location, err)
	}
	for _, a := range ans.Claims {
		r.Claims = append(r.Claims, claimResult(changes[a.Claim], a.Verdict))
	}
	if a := ans.StatefulSet; a != nil {
		// The re-create alone, allowed and without warnings, is what every
		// template change takes: not worth a line.
		templatesChange := len(res.TemplatesAdded)+len(res.TemplatesRemoved) > 0
		if v := a.Verdict; templatesChange || !v.Allowed || len(v.Warnings) > 0 {
			r.Templates = &TemplateVerdict{Verdict: verdictOf(v.Allowed), Denials: v.Denials, Warnings: v.Warnings}
		}
	}

	r.Status = StatusUnchanged
	if len(r.Claims) > 0 || r.Templates != nil {
		r.Status, r.Verdict = StatusChanged, Allowed
		if r.denied() {
			r.Verdict = Denied
		}
		r.CommitStatus = e.commitStatus(r)
	}
	r.addNewClaimsNote()
	// Read from the current StatefulSet, as the controller reads it from the
	// live one (see plan.PartitionOf).
	if note := plan.PartitionOf(current).HeldNote(res); note != "" && r.Verdict == Allowed {
		r.Notes = append(r.Notes, note)
	}
	if note := plan.OnDeleteNote(current, res); note != "" && r.Verdict == Allowed {
		r.Notes = append(r.Notes, note)
	}
	if r.Templates != nil && r.Templates.Verdict == Allowed && len(res.TemplatesAdded)+len(res.TemplatesRemoved) > 0 {
		r.Notes = append(r.Notes, "templates added or removed: the controller reports this and does not act on it")
	}
	return r, nil
}

// facts are what the policies read of the current state, from its snapshot.
func (e *evaluator) facts(namespace string, source policies.Source) gate.Facts {
	return gate.Facts{
		Namespace: func(context.Context) (*corev1.Namespace, error) { return e.cur.namespaces[namespace], nil },
		ResourceQuotas: func(context.Context) ([]corev1.ResourceQuota, error) {
			var out []corev1.ResourceQuota
			for _, q := range e.cur.quotas[namespace] {
				out = append(out, *q)
			}
			return out, nil
		},
		StorageClass: func(_ context.Context, pvc *corev1.PersistentVolumeClaim) (*storagev1.StorageClass, error) {
			if pvc == nil || pvc.Spec.StorageClassName == nil {
				return nil, nil
			}
			return e.cur.storageClasses[*pvc.Spec.StorageClassName], nil
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
		if _, o, ok := splitOrdinal(c.Name); ok && int64(o) >= from && int64(o) < to {
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

// compareAll is diff.Compute, also over the claims of in.PVCs outside the
// desired StatefulSet's ordinals: each such ordinal is compared as the only
// one of a StatefulSet of one replica, which is how the controller will
// compare it once the replicas reach it. Claims come in template order,
// then ordinal order.
func compareAll(in diff.Input) (diff.Result, error) {
	res, err := diff.Compute(in)
	if err != nil {
		return res, err
	}
	compared := make(map[string]bool, len(res.Claims))
	for _, c := range res.Claims {
		compared[c.Name] = true
	}
	outside := map[int32]bool{}
	for _, c := range in.PVCs {
		if _, o, ok := splitOrdinal(c.Name); ok && !compared[c.Name] {
			outside[o] = true
		}
	}
	for _, o := range slices.Sorted(maps.Keys(outside)) {
		one := *in.Desired
		one.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: o}
		one.Spec.Replicas = ptr.To(int32(1))
		at := in
		at.Desired = &one
		r, err := diff.Compute(at)
		if err != nil {
			return res, err
		}
		for _, c := range r.Claims {
			if !c.Missing {
				res.Claims = append(res.Claims, c)
			}
		}
	}
	order := make(map[string]int, len(in.Desired.Spec.VolumeClaimTemplates))
	for i, t := range in.Desired.Spec.VolumeClaimTemplates {
		order[t.Name] = i
	}
	slices.SortStableFunc(res.Claims, func(a, b diff.ClaimChange) int {
		return cmp.Or(cmp.Compare(order[a.Template], order[b.Template]), cmp.Compare(a.Ordinal, b.Ordinal))
	})
	return res, nil
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
	if v.Allowed && len(c.Immutable) > 0 {
		parts := make([]string, 0, len(c.Immutable))
		for _, m := range c.Immutable {
			parts = append(parts, fmt.Sprintf("%s: PVC %s, template %s", m.Field, m.Live, m.Desired))
		}
		out.Verdict = Denied
		out.Denials = append(out.Denials, policies.Reason{Policy: ImmutablePolicy,
			Message: "immutable fields differ, so the controller leaves the claim as it is: " + strings.Join(parts, "; ")})
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

func (r StatefulSet) denied() bool {
	if r.Templates != nil && r.Templates.Verdict == Denied {
		return true
	}
	for _, c := range r.Claims {
		if c.Verdict == Denied {
			return true
		}
	}
	return false
}

// commitStatus is the status --post-status posts: failure naming the first
// denial in the controller's words (outcome.StatefulSetDenied for the
// StatefulSet-level change, else outcome.ClaimDenied for the first denied
// claim, the order outcome.StateOf follows), or success summing up what
// changes.
func (e *evaluator) commitStatus(r StatefulSet) *CommitStatus {
	s := &CommitStatus{Context: gitstatus.StatusContext(e.contextPrefix, r.Namespace, r.Name), State: string(gitstatus.Success)}
	switch {
	case r.Templates != nil && r.Templates.Verdict == Denied:
		s.State, s.Description = string(gitstatus.Failure), outcome.StatefulSetDenied(plan.DenialText(r.Templates.Denials))
	case r.Verdict == Denied:
		s.State = string(gitstatus.Failure)
		for _, c := range r.Claims {
			if c.Verdict == Denied {
				s.Description = outcome.ClaimDenied(c.Name, plan.DenialText(c.Denials))
				break
			}
		}
	default:
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
