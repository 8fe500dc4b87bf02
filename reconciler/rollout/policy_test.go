package rollout_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

func TestMaxStepDeniesALargeBumpAndNothingIsPatched(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "big", 3, classExpandable, "1Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)

	// 1Gi → 2560Mi is +150%, above the default max_step_percent of 100.
	if err := fixtures.ReplaceTemplates(context.Background(), c, key, fixtures.SetTemplateSize("2560Mi")); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "denied", func(v *v1alpha1.VolumeClaimRollout) bool {
		return stalled(v) && v.Status.Counts.Denied == 3
	})
	msg := condition(vcr, meta.StalledCondition)
	for _, want := range []string{v1alpha1.ReasonPolicyDenied, "max-step", "data-big-0", "1Gi", "+150%", "max_step_percent 100"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Stalled: %s, want it to contain %q", msg, want)
		}
	}
	for _, cl := range vcr.Status.Claims {
		if cl.Phase != v1alpha1.ClaimDenied {
			t.Errorf("claim %s phase %s, want Denied", cl.Name, cl.Phase)
		}
	}
	for _, name := range []string{"data-big-0", "data-big-1", "data-big-2"} {
		if r := request(claim(t, c, ns, name)); r.String() != "1Gi" {
			t.Errorf("%s patched to %s despite the denial", name, r.String())
		}
	}
	if n := len(events(t, c, ns, "ClaimPatched")); n != 0 {
		t.Errorf("%d patches, want none", n)
	}
	if n := len(events(t, c, ns, v1alpha1.ReasonPolicyDenied)); n != 1 {
		t.Errorf("%d PolicyDenied events, want 1", n)
	}
}

func TestCustomPolicyDirectoryIsPickedUpWithoutRestart(t *testing.T) {
	c := started(t)
	ctx := context.Background()
	ns := namespace(t, c)
	labelNamespace(t, c, ns, "tier", "prod")
	sts := fixtures.StatefulSet(ns, "orders", 2, classExpandable, "1Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)

	remove := writePolicy(t, "tier_prod.rego", `package claimwarden.claims

deny contains {"policy": "prod-freeze", "msg": sprintf("namespace %s is tier=prod: frozen", [input.change.namespace])} if {
	input.namespace.metadata.labels.tier == "prod"
}
`)
	if err := fixtures.ReplaceTemplates(ctx, c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "denied by the custom policy", stalled)
	if msg := condition(vcr, meta.StalledCondition); !strings.Contains(msg, "prod-freeze") || !strings.Contains(msg, "frozen") {
		t.Errorf("Stalled: %s, want the custom policy's denial", msg)
	}
	if r := request(claim(t, c, ns, "data-orders-1")); r.String() != "1Gi" {
		t.Errorf("patched to %s despite the denial", r.String())
	}

	// Lifting the freeze is a file change, seen by the running controller.
	remove()
	waitRollout(t, c, key, "Ready once the policy is gone", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Capacity == "4Gi"
	})
}

func TestConfigMapPolicyIsPickedUpWithoutRestart(t *testing.T) {
	c := started(t)
	ctx := context.Background()
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "ledger", 1, classExpandable, "1Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)

	before := engine.Revision()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: policyNamespace, Name: "org-rules", Labels: map[string]string{policies.PolicyLabel: "true"}},
		Data: map[string]string{"ledger.rego": `package claimwarden.claims

deny contains {"policy": "ledger-freeze", "msg": "the ledger is frozen"} if input.change.statefulSet == "ledger"
`},
	}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitRevision(t, before)
	if err := fixtures.ReplaceTemplates(ctx, c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "denied by the ConfigMap policy", stalled)
	if msg := condition(vcr, meta.StalledCondition); !strings.Contains(msg, "ledger-freeze") {
		t.Errorf("Stalled: %s, want the ConfigMap policy's denial", msg)
	}

	if err := c.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, c, key, "Ready once the ConfigMap is gone", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Capacity == "2Gi"
	})
}

func TestBrokenPolicyDeniesEverythingNamingFileAndLine(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "fragile", 1, classExpandable, "1Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)

	remove := writePolicy(t, "broken.rego", "package claimwarden.claims\n\ndeny contains msg if {\n\tmsg := \n}\n")
	defer remove()
	if err := fixtures.ReplaceTemplates(context.Background(), c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "Stalled by the broken policy", stalled)
	if msg := condition(vcr, meta.StalledCondition); !strings.Contains(msg, "broken.rego:") {
		t.Errorf("Stalled: %s, want the file and line of the error", msg)
	}
	if msg := condition(vcr, v1alpha1.PoliciesReadyCondition); !strings.HasPrefix(msg, v1alpha1.ReasonPoliciesBroken) || !strings.Contains(msg, "broken.rego:") {
		t.Errorf("PoliciesReady: %s, want %s naming broken.rego", msg, v1alpha1.ReasonPoliciesBroken)
	}
	if r := request(claim(t, c, ns, "data-fragile-0")); r.String() != "1Gi" {
		t.Errorf("patched to %s under a broken policy", r.String())
	}
}

// writePolicy adds a policy file to the engine's directory, waits until the
// engine has loaded it, and returns a function that removes it and waits for
// the engine to drop it (also run at cleanup).
func writePolicy(t *testing.T, name, text string) func() {
	t.Helper()
	path := filepath.Join(policyDir, name)
	before := engine.Revision()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	waitRevision(t, before)
	removed := false
	remove := func() {
		if removed {
			return
		}
		removed = true
		before := engine.Revision()
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		waitRevision(t, before)
	}
	t.Cleanup(remove)
	return remove
}

func waitRevision(t *testing.T, old string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), fixtures.Poll, timeout, true, func(context.Context) (bool, error) {
		return engine.Revision() != old, nil
	})
	if err != nil {
		t.Fatal("the policy engine did not pick up the change")
	}
}

func labelNamespace(t *testing.T, c client.Client, name, key, value string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"`+key+`":"`+value+`"}}}`))
	if err := c.Patch(context.Background(), ns, patch); err != nil {
		t.Fatal(err)
	}
}
