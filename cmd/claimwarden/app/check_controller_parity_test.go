package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/cmd/claimwarden/app/check"
	"github.com/claimwarden/claimwarden/integrations/gitstatus"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/plan"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/storagesim"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// parityCase is one StatefulSet of the parity test and what its proposal changes.
type parityCase struct {
	name    string
	propose func(*appsv1.StatefulSet)
	// denied says whether the shipped policies deny the proposal.
	denied bool
}

func growTo(size string) func(*appsv1.StatefulSet) { return fixtures.SetTemplateSize(size) }

func addTemplate(sts *appsv1.StatefulSet) {
	logs := *sts.Spec.VolumeClaimTemplates[0].DeepCopy()
	logs.Name = "logs"
	sts.Spec.VolumeClaimTemplates = append(sts.Spec.VolumeClaimTemplates, logs)
}

// Issue 11, item 4: "the pull request sees what the rollout will get".
// The same proposals go to `claimwarden check --kubeconfig` (as the
// proposed manifests) and to the rollout controller (as GitOps proposals
// in its Store), on one real cluster: per claim the same verdict and
// denial text, for the StatefulSet-level change the same denial, and on
// the commit the same state and description.
func TestCheckSaysWhatTheControllerDoes(t *testing.T) {
	const ns, class, revision = "shop", "sim", "main@sha1:5f3a0c6d2e9b8a7f6e5d4c3b2a1908f7e6d5c4b3"
	cases := []parityCase{
		// max-step: +300% is denied for every claim.
		{name: "grow", propose: growTo("40Gi"), denied: true},
		// template-count: a template added is denied for the StatefulSet.
		{name: "added", propose: addTemplate, denied: true},
		// Both: the StatefulSet-level denial is the one named.
		{name: "both", propose: func(s *appsv1.StatefulSet) { growTo("40Gi")(s); addTemplate(s) }, denied: true},
		// Within every policy.
		{name: "ok", propose: growTo("15Gi")},
	}
	env := testenv.StartT(t, testenv.Options{Kwok: true, CRDDirs: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")}})
	ctx := context.Background()
	c, proposals := startController(t, env)
	for _, name := range []string{ns, "claimwarden-system"} {
		if err := fixtures.Namespace(ctx, c, name); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Create(ctx, storagesim.StorageClass(class, true)); err != nil {
		t.Fatal(err)
	}
	var manifest []string
	desired := map[string]*appsv1.StatefulSet{}
	for _, tc := range cases {
		sts := fixtures.StatefulSet(ns, tc.name, 2, class, "10Gi")
		if err := c.Create(ctx, sts.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		d := fixtures.StatefulSet(ns, tc.name, 2, class, "10Gi")
		tc.propose(d)
		d.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}
		desired[tc.name] = d
		b, err := yaml.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		manifest = append(manifest, string(b))
	}
	for _, tc := range cases {
		key := types.NamespacedName{Namespace: ns, Name: tc.name}
		if err := fixtures.WaitReady(ctx, c, key, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		waitFor(t, c, key, "Ready before any proposal", func(v *v1alpha1.VolumeClaimRollout) bool { return conditions.IsReady(v) })
	}

	// check first: the controller changes the cluster once it has the proposals.
	pr := filepath.Join(t.TempDir(), "proposal.yaml")
	if err := os.WriteFile(pr, []byte(strings.Join(manifest, "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	code := execute(ctx, []string{"check", "-f", pr, "--kubeconfig", env.Kubeconfig, "-o", "json", "--revision", revision}, nil, &stdout, &stderr)
	var report check.Report
	if err := json.Unmarshal([]byte(stdout.String()), &report); err != nil || code != exitDenied || len(report.StatefulSets) != len(cases) {
		t.Fatalf("check: exit %d, report %v:\n%s%s", code, err, stdout.String(), stderr.String())
	}
	checked := map[string]check.StatefulSet{}
	for _, s := range report.StatefulSets {
		checked[s.Name] = s
	}

	for _, tc := range cases {
		proposals.Set(ctx, proposal.Proposal{StatefulSet: desired[tc.name], Source: v1alpha1.Source{
			Kind: "Kustomization", Namespace: "flux-system", Name: "shop",
			Repository: "https://git.example.com/org/shop.git", Revision: revision,
		}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := types.NamespacedName{Namespace: ns, Name: tc.name}
			settled := func(v *v1alpha1.VolumeClaimRollout) bool {
				if v.Status.Proposal == nil || v.Status.Proposal.Source.Revision != revision {
					return false
				}
				if tc.denied {
					return conditions.IsStalled(v)
				}
				return conditions.IsReady(v)
			}
			vcr := waitFor(t, c, key, "settled on the proposal", settled)
			compareVerdicts(t, checked[tc.name], vcr)
			if !tc.denied {
				// The controller acted on what check allowed.
				for _, cs := range vcr.Status.Claims {
					if cs.Phase != v1alpha1.ClaimCompatible || cs.To != "15Gi" {
						t.Errorf("claim %s %s at %s, want compatible at 15Gi", cs.Name, cs.Phase, cs.To)
					}
				}
			}
		})
	}
}

// compareVerdicts asserts that check and the controller said the same of a StatefulSet.
func compareVerdicts(t *testing.T, got check.StatefulSet, vcr *v1alpha1.VolumeClaimRollout) {
	t.Helper()
	var sawDenial bool
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
			sawDenial = true
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
	controllerStatefulSet := ""
	for _, p := range vcr.Status.Problems {
		if strings.HasPrefix(p, outcome.StatefulSetDenied("")) {
			controllerStatefulSet = p
		}
	}
	checkStatefulSet := ""
	if got.Templates != nil && got.Templates.Verdict == check.Denied {
		sawDenial = true
		checkStatefulSet = outcome.StatefulSetDenied(plan.DenialText(got.Templates.Denials))
	}
	if checkStatefulSet != controllerStatefulSet {
		t.Errorf("StatefulSet-level denial: check %q, controller %q", checkStatefulSet, controllerStatefulSet)
	}

	if got.CommitStatus == nil {
		t.Fatalf("check gives %s no commit status", got.Name)
	}
	state, desc := outcome.StateOf(vcr)
	if want := gitstatus.StatusContext("claimwarden", got.Namespace, got.Name); got.CommitStatus.Context != want {
		t.Errorf("check's context %q, the controller's %q", got.CommitStatus.Context, want)
	}
	if got.CommitStatus.State != string(state) {
		t.Errorf("commit status state: check %s, controller %s (%q)", got.CommitStatus.State, state, desc)
	}
	// An allowed change is described by what check expects ("allowed: …")
	// and by where the rollout stands; a denial is worded once.
	if sawDenial && got.CommitStatus.Description != outcome.ShortDescription(desc) {
		t.Errorf("commit status description:\ncheck      %q\ncontroller %q", got.CommitStatus.Description, outcome.ShortDescription(desc))
	}
	if sawDenial != (state == outcome.Failure) {
		t.Errorf("check denied: %v; the controller's state %s: %s", sawDenial, state, describeRollout(vcr))
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

// startController runs the rollout controller as claimwarden runs it, with
// the shipped policies, the storage simulator and a Store the test proposes
// into; it stops with the test.
func startController(t *testing.T, env *testenv.Env) (client.Client, *proposal.Store) {
	t.Helper()
	logs, err := os.Create(filepath.Join(env.Dir, "controller.log"))
	if err != nil {
		t.Fatal(err)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs), zap.UseDevMode(true)))
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Controller names are process-wide: -count=2 registers them again.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	engine, err := policies.New(ctx, policies.Options{PollInterval: -1, Logger: ctrl.Log.WithName("policies")})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := (&storagesim.Simulator{Delay: 200 * time.Millisecond}).SetupWithManager(mgr); err != nil {
		cancel()
		t.Fatal(err)
	}
	proposals := proposal.NewStore()
	if err := rollout.SetupWithManager(mgr, rollout.Options{
		Policies:         engine,
		Proposals:        proposals,
		JournalKeySecret: types.NamespacedName{Namespace: "claimwarden-system", Name: "claimwarden-journal-key"},
	}); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
		_ = logs.Close()
	})
	return c, proposals
}

// waitFor polls the VolumeClaimRollout until ok holds, and returns it.
func waitFor(t *testing.T, c client.Client, key types.NamespacedName, what string, ok func(*v1alpha1.VolumeClaimRollout) bool) *v1alpha1.VolumeClaimRollout {
	t.Helper()
	vcr := &v1alpha1.VolumeClaimRollout{}
	err := wait.PollUntilContextTimeout(context.Background(), fixtures.Poll, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, vcr); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return ok(vcr), nil
	})
	if err != nil {
		t.Fatalf("VolumeClaimRollout %s never %s: %s", key, what, describeRollout(vcr))
	}
	return vcr
}

func describeRollout(v *v1alpha1.VolumeClaimRollout) string {
	var b strings.Builder
	fmt.Fprintf(&b, "problems=%q", v.Status.Problems)
	for _, c := range v.Status.Conditions {
		fmt.Fprintf(&b, "\n  %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	for _, c := range v.Status.Claims {
		fmt.Fprintf(&b, "\n  claim %s %s→%s %s %s", c.Name, c.From, c.To, c.Phase, c.Message)
	}
	return b.String()
}
