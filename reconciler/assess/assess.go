package assess

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/gate"
	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// Assessment is what a proposal gets: the comparison, the policies'
// answers, the decisions over the whole proposal and the plan.
type Assessment struct {
	Diff diff.Result
	// Answers are the policies' answers, with the denials Assess adds.
	Answers gate.Result
	Verdict Verdict
	Plan    plan.Plan
	// Claims are Input.Claims by name.
	Claims map[string]*corev1.PersistentVolumeClaim
	// Growth is what the proposal still has to grow, by quota resource.
	Growth Growth
}

// Verdict is what the answers decide.
type Verdict struct {
	// Claims maps denied claims to their denial text (plan.DenialText).
	Claims map[string]string
	// StatefulSet is the denial text of the StatefulSet-level change, or "".
	StatefulSet string
}

// Denied reports whether anything of the proposal is denied: then nothing
// of it is done, neither the re-create nor any patch.
func (v Verdict) Denied() bool { return len(v.Claims) > 0 || v.StatefulSet != "" }

// InvalidTemplates is a proposal whose templates cannot be compared:
// retrying cannot help, it waits for the templates to change.
type InvalidTemplates struct{ Err error }

func (e *InvalidTemplates) Error() string { return e.Err.Error() }

func (e *InvalidTemplates) Unwrap() error { return e.Err }

// Assess compares, asks, decides and plans. Its errors are the facts'
// (reading the cluster) and *InvalidTemplates.
func Assess(ctx context.Context, ev policies.Evaluator, in Input) (Assessment, error) {
	res, err := compare(in)
	if err != nil {
		return Assessment{}, &InvalidTemplates{err}
	}
	a := Assessment{Diff: res, Claims: byName(in.Claims)}
	a.Growth = growthOf(res, a.Claims, in.Desired)
	questions := plan.Questions(in.Desired, res, a.Claims, in.Recreate)
	totals := a.Growth.totals(res, in.InFlight)
	for i := range questions {
		questions[i].Input.Proposal = totals
		questions[i].Input.Server = in.Server
	}
	if a.Answers, err = ask(ctx, ev, questions, in.Facts, in.Also); err != nil {
		return Assessment{}, err
	}
	denyImmutable(&a.Answers, res)
	a.Verdict = Verdict{Claims: a.Answers.ClaimDenials(), StatefulSet: a.Answers.StatefulSetDenial()}
	a.Plan = plan.Build(res, plan.Options{
		Strategy: in.Strategy, MaxConcurrent: in.MaxConcurrent, PolicyDenied: a.Verdict.Claims,
		Partition: plan.PartitionOf(in.Live), OnDelete: in.OnDelete,
	})
	if a.Verdict.StatefulSet != "" {
		a.Hold("waiting: the StatefulSet change is denied by policy")
		a.Plan.Blocked = strings.TrimPrefix(a.Plan.Blocked+"; denied by policy: "+a.Verdict.StatefulSet, "; ")
	}
	if in.Recreate {
		// A denied proposal must leave every claim as it is.
		a.Hold("waiting: the StatefulSet is re-created with the proposed templates first")
	}
	return a, nil
}

// byName maps claims by name, pointing into claims.
func byName(claims []corev1.PersistentVolumeClaim) map[string]*corev1.PersistentVolumeClaim {
	out := make(map[string]*corev1.PersistentVolumeClaim, len(claims))
	for i := range claims {
		out[claims[i].Name] = &claims[i]
	}
	return out
}

// Hold keeps the plan's patches back: each claim it would patch now
// waits, saying why, so that the rollout does not look in progress.
func (a *Assessment) Hold(why string) {
	a.Plan.Patch = nil
	for i := range a.Plan.Steps {
		if a.Plan.Steps[i].Phase == v1alpha1.ClaimPatching {
			a.Plan.Steps[i].Phase, a.Plan.Steps[i].Message = v1alpha1.ClaimPending, why
		}
	}
}
