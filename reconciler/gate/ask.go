// Package gate asks the policies about a proposal: the one gate the rollout
// controller and `claimwarden check` both go through, so that a pull request
// sees the verdicts its rollout will get by construction, not by keeping two
// loops alike. What differs between them is where the facts come from (the
// controller's cache, check's snapshot), which Facts supplies.
package gate

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// Facts is what the policies read beyond the proposal and its claims.
type Facts struct {
	// Namespace returns the StatefulSet's Namespace (nil when unknown); it
	// is read only when there is a question to ask.
	Namespace func(ctx context.Context) (*corev1.Namespace, error)
	// ResourceQuotas returns the StatefulSet's namespace's ResourceQuotas
	// (nil when none or unknown); read, like Namespace, only when there is
	// a question to ask.
	ResourceQuotas func(ctx context.Context) ([]corev1.ResourceQuota, error)
	// StorageClass returns the StorageClass of a live claim (nil when it
	// names none or the class is unknown).
	StorageClass func(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (*storagev1.StorageClass, error)
	// Source names the proposal: the GitOps object, repository and revision.
	Source policies.Source
}

// Answer is one question with the policies' verdict.
type Answer struct {
	plan.Question
	Verdict policies.Verdict
}

// Result keeps every verdict of one proposal.
type Result struct {
	// Claims are the answers about claims, in question (diff) order.
	Claims []Answer
	// StatefulSet is the answer about the StatefulSet-level change (the
	// re-create, templates added or removed); nil when not asked.
	StatefulSet *Answer
}

// Ask asks ev every question, with the facts filled in, in order.
func Ask(ctx context.Context, ev policies.Evaluator, questions []plan.Question, facts Facts) (Result, error) {
	var out Result
	if len(questions) == 0 {
		return out, nil
	}
	ns, err := facts.Namespace(ctx)
	if err != nil {
		return out, err
	}
	ns = namespaceForPolicies(ns)
	quotas, err := facts.ResourceQuotas(ctx)
	if err != nil {
		return out, err
	}
	reduced := QuotasForPolicies(quotas)
	for _, q := range questions {
		q.Input.Namespace, q.Input.ResourceQuotas, q.Input.Source = ns, reduced, facts.Source
		if q.Claim != "" {
			sc, err := facts.StorageClass(ctx, q.PVC)
			if err != nil {
				return out, err
			}
			q.Input.StorageClass = storageClassForPolicies(sc)
		}
		a := Answer{Question: q, Verdict: ev.Evaluate(ctx, q.Input)}
		if q.Claim == "" {
			out.StatefulSet = &a
			continue
		}
		out.Claims = append(out.Claims, a)
	}
	return out, nil
}

// ClaimDenials maps each denied claim to its denial text (plan.DenialText),
// as plan.Options.PolicyDenied wants it.
func (r Result) ClaimDenials() map[string]string {
	out := map[string]string{}
	for _, a := range r.Claims {
		if !a.Verdict.Allowed {
			out[a.Claim] = plan.DenialText(a.Verdict.Denials)
		}
	}
	return out
}

// StatefulSetDenial is the denial text of the StatefulSet-level change, or
// "" when it was allowed or not asked.
func (r Result) StatefulSetDenial() string {
	if r.StatefulSet == nil || r.StatefulSet.Verdict.Allowed {
		return ""
	}
	return plan.DenialText(r.StatefulSet.Verdict.Denials)
}

// namespaceForPolicies and storageClassForPolicies drop the managed
// fields, which no policy needs and which would change every input digest
// (and so miss the verdict cache) with each server-side write. They copy:
// the caller's object may be shared (check's snapshot, by all its workers).
func namespaceForPolicies(ns *corev1.Namespace) *corev1.Namespace {
	if ns == nil || ns.ManagedFields == nil {
		return ns
	}
	out := ns.DeepCopy()
	out.ManagedFields = nil
	return out
}

func storageClassForPolicies(sc *storagev1.StorageClass) *storagev1.StorageClass {
	if sc == nil || sc.ManagedFields == nil {
		return sc
	}
	out := sc.DeepCopy()
	out.ManagedFields = nil
	return out
}
