package plan

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// Question is one policy evaluation a proposal needs: a claim that differs
// from its template, or the StatefulSet-level change of added or removed
// templates. The rollout controller and `claimwarden check` both ask
// exactly these, so a pull request sees the verdicts the rollout will get.
type Question struct {
	// Claim is the claim's name; "" for the StatefulSet-level question.
	Claim string
	// PVC is the live claim (nil for the StatefulSet-level question): the
	// caller looks up its StorageClass.
	PVC *corev1.PersistentVolumeClaim
	// Input lacks what only the caller can read — StorageClass, Namespace —
	// and the Source; the caller sets them before evaluating.
	Input policies.Input
}

// Questions lists the questions of one diff, in diff order with the
// StatefulSet-level question last. pvcs maps claim names to the live
// claims the diff was computed from. Claims not created yet are not asked
// about: the StatefulSet controller creates them from the template as it is.
// recreate says that sts is a proposal the live StatefulSet must be
// re-created to carry: the StatefulSet-level question is then always asked.
func Questions(sts *appsv1.StatefulSet, res diff.Result, pvcs map[string]*corev1.PersistentVolumeClaim, recreate bool) []Question {
	var out []Question
	desired := trimmed(sts)
	for _, c := range res.Claims {
		if c.Missing || !AskPolicies(c) {
			continue
		}
		pvc := pvcs[c.Name]
		out = append(out, Question{Claim: c.Name, PVC: pvc, Input: policies.Input{
			Change:      claimChange(sts, c, pvc),
			PVC:         trimmedPVC(pvc),
			Template:    TemplateNamed(sts, c.Template),
			StatefulSet: desired,
		}})
	}
	if recreate || len(res.TemplatesAdded)+len(res.TemplatesRemoved) > 0 {
		out = append(out, Question{Input: policies.Input{
			Change: policies.Change{
				Kind: policies.KindStatefulSet, Namespace: sts.Namespace, StatefulSet: sts.Name,
				TemplatesAdded: res.TemplatesAdded, TemplatesRemoved: res.TemplatesRemoved,
				Recreate: recreate,
			},
			StatefulSet: desired,
		}})
	}
	return out
}

// RestartQuestion is the question asked before the controller evicts pod
// so that claim c's file system grows: a claim question with restart true
// and no storage change (the claim was patched already), so that policies
// on sizes have nothing to say about it and a policy may refuse restarts.
func RestartQuestion(sts *appsv1.StatefulSet, c diff.ClaimChange, pvc *corev1.PersistentVolumeClaim, pod string) Question {
	return Question{Claim: c.Name, PVC: pvc, Input: policies.Input{
		Change: policies.Change{
			Kind: policies.KindClaim, Namespace: sts.Namespace, StatefulSet: sts.Name,
			Claim: c.Name, Template: c.Template, Ordinal: c.Ordinal,
			Restart: true, Pod: pod,
		},
		PVC:         trimmedPVC(pvc),
		Template:    TemplateNamed(sts, c.Template),
		StatefulSet: trimmed(sts),
	}}
}

// WithTemplates is live with the proposal's volumeClaimTemplates and
// nothing else of it: what the controller diffs and asks about for a GitOps
// proposal. The rest (Pod template, replicas...) is the GitOps tool's to
// apply, and taking it here could restart Pods the change does not need.
func WithTemplates(live, proposal *appsv1.StatefulSet) *appsv1.StatefulSet {
	out := live.DeepCopy()
	out.Spec.VolumeClaimTemplates = make([]corev1.PersistentVolumeClaim, len(proposal.Spec.VolumeClaimTemplates))
	for i := range proposal.Spec.VolumeClaimTemplates {
		proposal.Spec.VolumeClaimTemplates[i].DeepCopyInto(&out.Spec.VolumeClaimTemplates[i])
	}
	return out
}

// AskPolicies reports whether a claim and its template differ in anything a
// policy could have an opinion on.
func AskPolicies(c diff.ClaimChange) bool {
	return c.NeedsPatch() || len(c.Immutable) > 0 || c.TemplateBytes != c.FromBytes ||
		(c.VACTo != nil && (c.VACFrom == nil || *c.VACFrom != *c.VACTo))
}

// DenialText renders denials as "policy: message; policy: message", the
// form rollout status, events and commit statuses show.
func DenialText(rs []policies.Reason) string {
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, r.Policy+": "+r.Message)
	}
	return strings.Join(parts, "; ")
}

// claimChange renders a claim change as the policies see it.
func claimChange(sts *appsv1.StatefulSet, c diff.ClaimChange, pvc *corev1.PersistentVolumeClaim) policies.Change {
	ch := policies.Change{
		Kind: policies.KindClaim, Namespace: sts.Namespace, StatefulSet: sts.Name,
		Claim: c.Name, Template: c.Template, Ordinal: c.Ordinal,
		Storage: &policies.QuantityChange{
			From: c.RequestFrom.String(), To: c.TemplateRequest.String(),
			FromBytes: c.FromBytes, ToBytes: c.TemplateBytes,
			Recovery: c.Recovery,
		},
		Labels: c.Labels, Annotations: c.Annotations,
	}
	if c.CapacityBytes > 0 {
		ch.Storage.Capacity, ch.Storage.CapacityBytes = c.Capacity.String(), c.CapacityBytes
	}
	if t := TemplateNamed(sts, c.Template); t != nil && t.Spec.StorageClassName != nil {
		ch.StorageClassName = &policies.StringChange{From: deref(pvc.Spec.StorageClassName), To: *t.Spec.StorageClassName}
	}
	if c.VACTo != nil && (c.VACFrom == nil || *c.VACFrom != *c.VACTo) {
		ch.VolumeAttributesClassName = &policies.StringChange{From: deref(c.VACFrom), To: *c.VACTo}
	}
	for _, m := range c.Immutable {
		ch.Immutable = append(ch.Immutable, policies.Mismatch{Field: string(m.Field), Live: m.Live, Desired: m.Desired})
	}
	return ch
}

// TemplateNamed returns the StatefulSet's template of that name, or nil.
func TemplateNamed(sts *appsv1.StatefulSet, name string) *corev1.PersistentVolumeClaim {
	for i := range sts.Spec.VolumeClaimTemplates {
		if sts.Spec.VolumeClaimTemplates[i].Name == name {
			return &sts.Spec.VolumeClaimTemplates[i]
		}
	}
	return nil
}

// trimmed drops managedFields, which no policy needs and which would make
// every input digest change with each server-side write, and the status.
func trimmed(sts *appsv1.StatefulSet) *appsv1.StatefulSet {
	out := sts.DeepCopy()
	out.ManagedFields = nil
	out.Status = appsv1.StatefulSetStatus{}
	return out
}

func trimmedPVC(pvc *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
	if pvc == nil {
		return nil
	}
	out := pvc.DeepCopy()
	out.ManagedFields = nil
	return out
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
