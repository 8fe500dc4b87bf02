package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/cmd/claimwarden/app/check"
	"github.com/claimwarden/claimwarden/integrations/commitstatus"
	"github.com/claimwarden/claimwarden/reconciler/assess"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/plan"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// parityCase is one (base cluster state, proposal) pair of the parity
// test: a StatefulSet in a namespace of its own, brought to its base state,
// then proposed to `check` and to the controller.
type parityCase struct {
	name string
	// replicas and size make the base StatefulSet (2 and 10Gi when unset);
	// shape changes it before it is created (its update strategy).
	replicas int32
	size     string
	shape    func(*appsv1.StatefulSet)
	// prepare brings the namespace to the case's base state once the
	// StatefulSet and its rollout are Ready (a quota, a failed expansion,
	// storage that expands offline). It runs concurrently with the other
	// cases' and must not touch *testing.T.
	prepare func(ctx context.Context, p *parity, key types.NamespacedName) error
	// propose turns the base StatefulSet into the proposed one.
	propose func(*appsv1.StatefulSet)
	want    parityWant
}

// parityWant is the decision both must come to.
type parityWant struct {
	// claimPolicy, when set, denies every claim, by this policy alone.
	claimPolicy string
	// statefulSetPolicy, when set, denies the StatefulSet-level change (the
	// re-create, templates added or removed), by this policy alone.
	statefulSetPolicy string
	// waiting is, for an allowed proposal, the Ready reason of a rollout
	// that waits on purpose; "" for one that gets Ready.
	waiting string
	// compatible counts the claims compatible while the rollout waits:
	// those it was not held from (the canary above a partition).
	compatible int32
	// noHeldNote says check has no note for what the rollout waits for.
	noHeldNote bool
	// size is every claim's request once the allowed rollout is Ready.
	size string
	// then asserts what else the case is about, once the rollout settled.
	then func(t *testing.T, p *parity, got check.StatefulSet, vcr *v1alpha1.VolumeClaimRollout)
}

func (w parityWant) denied() bool { return w.claimPolicy != "" || w.statefulSetPolicy != "" }

func growTo(size string) func(*appsv1.StatefulSet) { return fixtures.SetTemplateSize(size) }

func addTemplate(sts *appsv1.StatefulSet) {
	logs := *sts.Spec.VolumeClaimTemplates[0].DeepCopy()
	logs.Name = "logs"
	sts.Spec.VolumeClaimTemplates = append(sts.Spec.VolumeClaimTemplates, logs)
}

func accessModes(modes ...corev1.PersistentVolumeAccessMode) func(*appsv1.StatefulSet) {
	return func(s *appsv1.StatefulSet) { s.Spec.VolumeClaimTemplates[0].Spec.AccessModes = modes }
}

func storageClassName(class string) func(*appsv1.StatefulSet) {
	return func(s *appsv1.StatefulSet) { s.Spec.VolumeClaimTemplates[0].Spec.StorageClassName = ptr.To(class) }
}

// parityCases are the cases of issue 28, item 5, and those of issue 11's
// first parity test (grow, added, both, ok).
func parityCases() []parityCase {
	return []parityCase{
		// max-step: +300% is denied for every claim.
		{name: "grow", propose: growTo("40Gi"), want: parityWant{claimPolicy: "max-step"}},
		// template-count: a template added is denied for the StatefulSet.
		{name: "added", propose: addTemplate, want: parityWant{statefulSetPolicy: "template-count"}},
		// Both: the StatefulSet-level denial is the one named.
		{name: "both", propose: func(s *appsv1.StatefulSet) { growTo("40Gi")(s); addTemplate(s) },
			want: parityWant{claimPolicy: "max-step", statefulSetPolicy: "template-count"}},
		// Within every policy.
		{name: "ok", propose: growTo("15Gi"), want: parityWant{size: "15Gi"}},

		// An immutable field no policy looks at: check denies it as
		// immutable-field, and the controller must too, before it re-creates
		// anything (issue 28: today it re-creates and stalls with
		// ImmutableFieldChanged, an error).
		{name: "modes", propose: accessModes(corev1.ReadWriteMany), want: parityWant{claimPolicy: assess.ImmutablePolicy}},
		// An immutable field the shipped class-must-match denies.
		{name: "class", propose: storageClassName(parityOtherClass), want: parityWant{claimPolicy: "class-must-match"}},

		// Quota over the whole proposal: three claims of 2Gi under 7Gi, +1Gi
		// each. Each claim alone fits (6Gi + 1Gi); the proposal (9Gi) does
		// not, so every claim is denied and nothing is
		// touched (issue 28: today check allows it, and the controller
		// re-creates the StatefulSet and patches one claim).
		{name: "quota-over", replicas: 3, size: "2Gi", prepare: storageQuota("7Gi"), propose: growTo("3Gi"),
			want: parityWant{claimPolicy: "quota-fits"}},
		// The same proposal under 10Gi fits.
		{name: "quota-fits", replicas: 3, size: "2Gi", prepare: storageQuota("10Gi"), propose: growTo("3Gi"),
			want: parityWant{size: "3Gi"}},

		// KEP-1790: claim 1's expansion to 20Gi failed; a template of 15Gi
		// lowers its request (a recovery) and grows claim 0.
		{name: "recovery", prepare: failedExpansion("20Gi"), propose: growTo("15Gi"),
			want: parityWant{size: "15Gi", then: recoveredAlike}},

		// Waiting on purpose: every claim for its Pod's deletion...
		{name: "ondelete", shape: onDelete, propose: growTo("15Gi"), want: parityWant{waiting: v1alpha1.ReasonWaitingForPods}},
		// ...the claims below the partition until it moves...
		{name: "partition", shape: partition(1), propose: growTo("15Gi"), want: parityWant{waiting: v1alpha1.ReasonPartitioned, compatible: 1}},
		// ...and a claim whose file system grows only on a remount, for its
		// Pod's restart. That an expansion is offline shows only once the
		// storage did its part (FileSystemResizePending): no API object
		// says it beforehand, so check allows the change, as the controller
		// does, with no note of the wait that follows.
		{name: "offline", prepare: offlineStorage, propose: growTo("15Gi"),
			want: parityWant{waiting: v1alpha1.ReasonWaitingForRestart, noHeldNote: true}},
	}
}

// Issue 11, item 4, and issue 28, item 5: "the pull request sees what the
// rollout will get". Each case's proposal goes to `claimwarden check
// --kubeconfig` (as the proposed manifests) and to the rollout controller
// (as a GitOps proposal in its Store), on one real cluster: per claim the
// same verdict and denial text, for the StatefulSet-level change the same
// denial, on the commit the same state and description; a denial leaves the
// StatefulSet and its claims as they were, an allowed change gets Ready or
// waits where check said it would.
func TestCheckSaysWhatTheControllerDoes(t *testing.T) {
	const revision = "main@sha1:5f3a0c6d2e9b8a7f6e5d4c3b2a1908f7e6d5c4b3"
	cases := parityCases()
	p := startParity(t)
	bases := p.baseStates(t, cases)

	// check first: the controller changes the cluster once it has the proposals.
	checked := p.check(t, cases, revision)
	for _, tc := range cases {
		p.propose(tc, revision)
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := p.key(tc)
			got, ok := checked[key]
			if !ok {
				t.Fatalf("check reports nothing of StatefulSet %s", key)
			}
			vcr := waitFor(t, p.c, key, "settled on the proposal", func(v *v1alpha1.VolumeClaimRollout) bool {
				return settledOn(v, revision, tc.want)
			})
			compareDecision(t, tc.want, got, vcr)
			p.assertActed(t, tc, bases[i], vcr)
			if tc.want.then != nil {
				tc.want.then(t, p, got, vcr)
			}
		})
	}
}

// check runs `claimwarden check` on every case's proposal at once, against
// the cluster, and returns its report by StatefulSet.
func (p *parity) check(t *testing.T, cases []parityCase, revision string) map[types.NamespacedName]check.StatefulSet {
	t.Helper()
	manifest := make([]string, 0, len(cases))
	wantCode := exitOK
	for _, tc := range cases {
		manifest = append(manifest, string(p.desiredYAML(t, tc)))
		if tc.want.denied() {
			wantCode = exitDenied
		}
	}
	pr := filepath.Join(t.TempDir(), "proposal.yaml")
	if err := os.WriteFile(pr, []byte(strings.Join(manifest, "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	code := execute(context.Background(), []string{"check", "-f", pr, "--kubeconfig", p.env.Kubeconfig, "-o", "json", "--revision", revision}, nil, &stdout, &stderr)
	var report check.Report
	if err := json.Unmarshal([]byte(stdout.String()), &report); err != nil || len(report.StatefulSets) != len(cases) {
		t.Fatalf("check: exit %d, report %v:\n%s%s", code, err, stdout.String(), stderr.String())
	}
	if code != wantCode {
		t.Errorf("check: exit %d, want %d:\n%s", code, wantCode, stderr.String())
	}
	out := map[types.NamespacedName]check.StatefulSet{}
	for _, s := range report.StatefulSets {
		out[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s
	}
	return out
}

// settledOn says the rollout worked on revision and came to a decision:
// Ready, Stalled, or waiting on purpose with the claims want.compatible
// (a partition holds its claims while the StatefulSet is re-created too,
// before the canary is patched).
func settledOn(v *v1alpha1.VolumeClaimRollout, revision string, want parityWant) bool {
	if v.Status.Proposal == nil || v.Status.Proposal.Source.Revision != revision {
		return false
	}
	if conditions.IsReady(v) || conditions.IsStalled(v) {
		return true
	}
	ready := conditions.Get(v, meta.ReadyCondition)
	return ready != nil && !conditions.IsReconciling(v) && v.Status.Counts.Compatible == want.compatible && slices.Contains(
		[]string{v1alpha1.ReasonWaitingForPods, v1alpha1.ReasonPartitioned, v1alpha1.ReasonWaitingForRestart}, ready.Reason)
}

// compareDecision asserts that check and the controller said the same of
// a StatefulSet, and that it is the decision the case wants.
func compareDecision(t *testing.T, want parityWant, got check.StatefulSet, vcr *v1alpha1.VolumeClaimRollout) {
	t.Helper()
	compareClaims(t, got, vcr)
	compareStatefulSetDenial(t, got, vcr)
	wantClaimPolicy(t, want.claimPolicy, got, vcr)
	wantStatefulSetPolicy(t, want.statefulSetPolicy, got)

	if got.CommitStatus == nil {
		t.Fatalf("check gives %s/%s no commit status: %v", got.Namespace, got.Name, got.Notes)
	}
	if want := commitstatus.StatusContext("claimwarden", got.Namespace, got.Name); got.CommitStatus.Context != want {
		t.Errorf("check's context %q, the controller's %q", got.CommitStatus.Context, want)
	}
	state, desc := outcome.StateOf(vcr)
	ready := conditions.Get(vcr, meta.ReadyCondition)
	switch {
	case want.denied():
		if got.CommitStatus.State != string(commitstatus.Failure) || state != outcome.Failure {
			t.Errorf("commit status state: check %s (%q), controller %s (%q); want failure from both",
				got.CommitStatus.State, got.CommitStatus.Description, state, desc)
		}
		if stalled := conditions.Get(vcr, meta.StalledCondition); stalled == nil || stalled.Reason != v1alpha1.ReasonPolicyDenied {
			t.Errorf("the rollout is not Stalled/%s: %s", v1alpha1.ReasonPolicyDenied, describeRollout(vcr))
		}
		// A denial is worded once.
		if got.CommitStatus.Description != outcome.ShortDescription(desc) {
			t.Errorf("commit status description:\ncheck      %q\ncontroller %q", got.CommitStatus.Description, outcome.ShortDescription(desc))
		}
	case want.waiting != "":
		// check tells what the change comes to; the rollout waits on the way.
		if got.CommitStatus.State != string(commitstatus.Success) || state != outcome.Pending || ready == nil || ready.Reason != want.waiting {
			t.Errorf("check %s (%q); the controller %s (%q), want success and pending/%s: %s",
				got.CommitStatus.State, got.CommitStatus.Description, state, desc, want.waiting, describeRollout(vcr))
			return
		}
		// "1/2 claims compatible; <what holds the others>": check's note.
		_, held, _ := strings.Cut(ready.Message, "; ")
		if !want.noHeldNote && !slices.Contains(got.Notes, held) {
			t.Errorf("the rollout waits: %q; check's notes %q do not say so", held, got.Notes)
		}
	default:
		// An allowed change is described by what check expects ("allowed:
		// …") and by where the rollout stands: only the state compares.
		if got.CommitStatus.State != string(commitstatus.Success) || state != outcome.Success {
			t.Errorf("commit status state: check %s (%q), controller %s (%q); want success from both",
				got.CommitStatus.State, got.CommitStatus.Description, state, desc)
		}
	}
}

// compareClaims: per claim the same verdict, and for a denial the same text.
func compareClaims(t *testing.T, got check.StatefulSet, vcr *v1alpha1.VolumeClaimRollout) {
	t.Helper()
	controllerClaims := map[string]v1alpha1.ClaimStatus{}
	for _, c := range vcr.Status.Claims {
		controllerClaims[c.Name] = c
	}
	for _, c := range got.Claims {
		cs, ok := controllerClaims[c.Name]
		switch {
		case !ok:
			t.Errorf("check asked about claim %s, which the controller does not list", c.Name)
		case c.Verdict == check.Denied:
			if want := "denied by policy: " + plan.DenialText(c.Denials); cs.Phase != v1alpha1.ClaimDenied || cs.Message != want {
				t.Errorf("claim %s: the controller says %s %q, check denied it: %q", c.Name, cs.Phase, cs.Message, want)
			}
		case cs.Phase == v1alpha1.ClaimDenied:
			t.Errorf("claim %s: check allows it, the controller says %s %q", c.Name, cs.Phase, cs.Message)
		}
	}
	for _, cs := range vcr.Status.Claims {
		if cs.Phase == v1alpha1.ClaimDenied && !checkDenied(got, cs.Name) {
			t.Errorf("claim %s: the controller denied it (%q), check did not", cs.Name, cs.Message)
		}
	}
}

// compareStatefulSetDenial: the same denial of the StatefulSet-level change.
func compareStatefulSetDenial(t *testing.T, got check.StatefulSet, vcr *v1alpha1.VolumeClaimRollout) {
	t.Helper()
	controller := ""
	for _, p := range vcr.Status.Problems {
		if strings.HasPrefix(p, outcome.StatefulSetDenied("")) {
			controller = p
		}
	}
	checked := ""
	if got.Templates != nil && got.Templates.Verdict == check.Denied {
		checked = outcome.StatefulSetDenied(plan.DenialText(got.Templates.Denials))
	}
	if checked != controller {
		t.Errorf("StatefulSet-level denial: check %q, controller %q", checked, controller)
	}
}

// wantClaimPolicy asserts that policy, and it alone, denies every claim
// (as check says; compareClaims holds the controller to the same words),
// or, for "", that no claim is denied.
func wantClaimPolicy(t *testing.T, policy string, got check.StatefulSet, vcr *v1alpha1.VolumeClaimRollout) {
	t.Helper()
	if policy == "" {
		for _, c := range got.Claims {
			if c.Verdict == check.Denied {
				t.Errorf("claim %s: check denies it (%s), want it allowed", c.Name, plan.DenialText(c.Denials))
			}
		}
		return
	}
	for _, c := range got.Claims {
		if c.Verdict != check.Denied || len(c.Denials) != 1 || c.Denials[0].Policy != policy {
			t.Errorf("claim %s: check says %s %q, want it denied by %s alone", c.Name, c.Verdict, plan.DenialText(c.Denials), policy)
		}
	}
	existing := 0
	for _, cs := range vcr.Status.Claims {
		if cs.From == "" {
			continue // not created yet (a template added): nothing to deny
		}
		existing++
		if cs.Phase != v1alpha1.ClaimDenied || !strings.HasPrefix(cs.Message, "denied by policy: "+policy+": ") {
			t.Errorf("claim %s: the controller says %s %q, want it denied by %s", cs.Name, cs.Phase, cs.Message, policy)
		}
	}
	if len(got.Claims) != existing {
		t.Errorf("check asks about %d claims, the controller has %d: %s", len(got.Claims), existing, describeRollout(vcr))
	}
}

// wantStatefulSetPolicy asserts that policy alone denies the
// StatefulSet-level change in check's words (compareStatefulSetDenial
// holds the controller to them), or, for "", that nothing denies it.
func wantStatefulSetPolicy(t *testing.T, policy string, got check.StatefulSet) {
	t.Helper()
	var denials []string
	if got.Templates != nil && got.Templates.Verdict == check.Denied {
		for _, d := range got.Templates.Denials {
			denials = append(denials, d.Policy)
		}
	}
	if want := []string{policy}; policy == "" && len(denials) > 0 || policy != "" && !slices.Equal(denials, want) {
		t.Errorf("the StatefulSet-level change: check's denials %q, want %q", denials, policy)
	}
}

func checkDenied(s check.StatefulSet, claim string) bool {
	for _, c := range s.Claims {
		if c.Name == claim {
			return c.Verdict == check.Denied
		}
	}
	return false
}

// recoveredAlike: check says which claim recovers from which failed
// expansion, the controller says it recovered that claim from it.
func recoveredAlike(t *testing.T, _ *parity, got check.StatefulSet, vcr *v1alpha1.VolumeClaimRollout) {
	t.Helper()
	recoveries := 0
	for _, c := range got.Claims {
		for _, change := range c.Changes {
			rest, ok := strings.CutPrefix(change, "recovers from the failed expansion to ")
			if !ok {
				continue
			}
			recoveries++
			failed, _, _ := strings.Cut(rest, ":")
			said := "recovered from failed expansion to " + c.To + " (the expansion to " + failed + " had failed)"
			if cs := claimStatusOf(vcr, c.Name); !strings.Contains(cs.Message, said) {
				t.Errorf("claim %s: check says it %s; the controller says %q, want %q", c.Name, change, cs.Message, said)
			}
		}
	}
	if recoveries != 1 {
		t.Errorf("check says %d claims recover, want 1: %+v", recoveries, got.Claims)
	}
}

func claimStatusOf(v *v1alpha1.VolumeClaimRollout, name string) v1alpha1.ClaimStatus {
	for _, c := range v.Status.Claims {
		if c.Name == name {
			return c
		}
	}
	return v1alpha1.ClaimStatus{}
}
