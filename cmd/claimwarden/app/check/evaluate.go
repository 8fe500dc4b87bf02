package check

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/gitstatus"
	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/diff"
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
}

// all evaluates every StatefulSet, in parallel (the engine is safe for
// concurrent use), keeping input order.
func (e *evaluator) all(ctx context.Context, sets []manifests.StatefulSet) ([]StatefulSet, error) {
	out := make([]StatefulSet, len(sets))
	errs := make([]error, len(sets))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				out[i], errs[i] = e.one(ctx, sets[i])
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
	strategy, err := e.strategyOf(sts)
	if err != nil {
		return r, fmt.Errorf("%s: %w", p.Location, err)
	}
	r.Strategy = string(strategy)
	if sts.Annotations[v1alpha1.IgnoreAnnotation] == "true" {
		r.Status, r.Notes = StatusIgnored, []string{fmt.Sprintf("annotation %s is \"true\": claimwarden leaves it alone", v1alpha1.IgnoreAnnotation)}
		return r, nil
	}
	live := e.cur.statefulSets[sts.Namespace+"/"+sts.Name]
	if live == nil {
		r.Status = StatusNew
		r.NewClaims = len(sts.Spec.VolumeClaimTemplates) * int(*sts.Spec.Replicas)
		r.Notes = []string{"not in the " + e.noun + ": the StatefulSet controller creates its claims from the templates"}
		return r, nil
	}
	if owner := metav1.GetControllerOf(live); owner != nil {
		r.Status, r.Notes = StatusIgnored, []string{fmt.Sprintf("controlled by %s %s, which owns its claims", owner.Kind, owner.Name)}
		return r, nil
	}

	if diff.TemplatesEqual(live.Spec.VolumeClaimTemplates, sts.Spec.VolumeClaimTemplates) {
		// Nothing for the controller to gate: what it does with the claims
		// as they are is not this change's doing.
		r.Status = StatusUnchanged
		r.NewClaims = newReplicas(live, sts)
		r.addNewClaimsNote()
		return r, nil
	}
	// As the controller does with a GitOps proposal: the current StatefulSet
	// with the proposed templates, compared with the current templates.
	desired := plan.WithTemplates(live, sts)
	claims, err := e.claimsOf(desired)
	if err != nil {
		return r, fmt.Errorf("%s: %w", p.Location, err)
	}
	res, err := diff.Compute(diff.Input{Desired: desired, LiveTemplates: diff.LiveTemplatesOf(live), PVCs: claims, IgnoreLabels: e.ignoredLabels[p.File], MaxClaims: diff.DefaultMaxClaims})
	if err != nil {
		return r, fmt.Errorf("%s: %w", p.Location, err)
	}
	byName := make(map[string]*corev1.PersistentVolumeClaim, len(claims))
	for i := range claims {
		byName[claims[i].Name] = &claims[i]
	}
	r.NewClaims = newReplicas(live, sts)
	for _, c := range res.Claims {
		if c.Missing {
			r.NewClaims++
		}
	}
	r.TemplatesAdded, r.TemplatesRemoved = res.TemplatesAdded, res.TemplatesRemoved

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
	for _, q := range questions {
		q.Input.Namespace, q.Input.Source = e.cur.namespaces[sts.Namespace], source
		if q.PVC != nil && q.PVC.Spec.StorageClassName != nil {
			q.Input.StorageClass = e.cur.storageClasses[*q.PVC.Spec.StorageClassName]
		}
		v := e.policies.Evaluate(ctx, q.Input)
		if q.Claim == "" {
			// The re-create alone, allowed and without warnings, is what
			// every template change takes: not worth a line.
			templatesChange := len(res.TemplatesAdded)+len(res.TemplatesRemoved) > 0
			if templatesChange || !v.Allowed || len(v.Warnings) > 0 {
				r.Templates = &TemplateVerdict{Verdict: verdictOf(v.Allowed), Denials: v.Denials, Warnings: v.Warnings}
			}
			continue
		}
		r.Claims = append(r.Claims, claimResult(changes[q.Claim], v))
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
	if r.Templates != nil && r.Templates.Verdict == Allowed && len(res.TemplatesAdded)+len(res.TemplatesRemoved) > 0 {
		r.Notes = append(r.Notes, "templates added or removed: the controller reports this and does not act on it")
	}
	return r, nil
}

// newReplicas counts the claims of replicas the proposal adds: the
// StatefulSet controller creates them from the proposed templates.
func newReplicas(live, proposal *appsv1.StatefulSet) int {
	return len(proposal.Spec.VolumeClaimTemplates) * max(0, int(*proposal.Spec.Replicas-replicasOf(live)))
}

func replicasOf(sts *appsv1.StatefulSet) int32 {
	if sts.Spec.Replicas == nil {
		return 1
	}
	return *sts.Spec.Replicas
}

func (r *StatefulSet) addNewClaimsNote() {
	if r.NewClaims > 0 {
		r.Notes = append(r.Notes, plural(r.NewClaims, "new claim")+", to be created by the StatefulSet controller from the templates")
	}
}

// claimsOf returns the current claims the StatefulSet's templates and
// replicas name. Handing the diff only these keeps a namespace of
// thousands of claims from being indexed once per StatefulSet.
func (e *evaluator) claimsOf(sts *appsv1.StatefulSet) ([]corev1.PersistentVolumeClaim, error) {
	// The controller's bounds: no loop over billions of replicas, no
	// ordinal past math.MaxInt32.
	start, count, err := diff.Ordinals(sts, diff.DefaultMaxClaims)
	if err != nil {
		return nil, err
	}
	inNS := e.cur.claims[sts.Namespace]
	if len(inNS) == 0 {
		return nil, nil
	}
	var out []corev1.PersistentVolumeClaim
	for i := range sts.Spec.VolumeClaimTemplates {
		for k := range count {
			if pvc := inNS[diff.ClaimName(sts.Spec.VolumeClaimTemplates[i].Name, sts.Name, start+k)]; pvc != nil {
				out = append(out, *pvc)
			}
		}
	}
	return out, nil
}

// strategyOf reads the update-strategy annotation as the controller does.
func (e *evaluator) strategyOf(sts *appsv1.StatefulSet) (v1alpha1.UpdateStrategy, error) {
	v, ok := sts.Annotations[v1alpha1.UpdateStrategyAnnotation]
	if !ok {
		return e.strategy, nil
	}
	switch s := v1alpha1.UpdateStrategy(v); s {
	case v1alpha1.InPlace, v1alpha1.OnClaimDelete:
		return s, nil
	}
	return "", fmt.Errorf("StatefulSet %s/%s: annotation %s: %q is not one of %s, %s",
		sts.Namespace, sts.Name, v1alpha1.UpdateStrategyAnnotation, v, v1alpha1.InPlace, v1alpha1.OnClaimDelete)
}

// claimResult renders one claim's verdict.
func claimResult(c diff.ClaimChange, v policies.Verdict) Claim {
	out := Claim{
		Name: c.Name, Template: c.Template, Ordinal: c.Ordinal,
		From: c.RequestFrom.String(), To: c.TemplateRequest.String(),
		FromBytes: c.FromBytes, ToBytes: c.TemplateBytes,
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
// denial as the controller words it ("<claim>: <policy>: <message>"), or
// success summing up what changes.
func (e *evaluator) commitStatus(r StatefulSet) *CommitStatus {
	s := &CommitStatus{Context: gitstatus.StatusContext(e.contextPrefix, r.Namespace, r.Name), State: string(gitstatus.Success)}
	switch {
	case r.Templates != nil && r.Templates.Verdict == Denied:
		s.State, s.Description = string(gitstatus.Failure), "StatefulSet change denied by policy: "+plan.DenialText(r.Templates.Denials)
	case r.Verdict == Denied:
		s.State = string(gitstatus.Failure)
		for _, c := range r.Claims {
			if c.Verdict == Denied {
				s.Description = c.Name + ": " + plan.DenialText(c.Denials)
				break
			}
		}
	default:
		s.Description = "allowed: " + sizeSummary(r.Claims)
	}
	s.Description = gitstatus.TruncateDescription(s.Description)
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
