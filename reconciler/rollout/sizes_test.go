package rollout_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// 2^64 + 15Gi: the API server accepts it in a template, and
// Quantity.Value wraps it to 15Gi, a +50% change the policies allow.
func TestSizeBeyondInt64StallsWithoutPatching(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "ledger", 1, classExpandable, "10Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	before := claim(t, c, ns, "data-ledger-0").ResourceVersion

	if err := fixtures.ReplaceTemplates(context.Background(), c, key, fixtures.SetTemplateSize("18446744089815678976")); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "Stalled by the invalid template", func(v *v1alpha1.VolumeClaimRollout) bool {
		return stalled(v) && strings.Contains(condition(v, meta.StalledCondition), "18446744089815678976")
	})
	msg := condition(vcr, meta.StalledCondition)
	for _, want := range []string{v1alpha1.ReasonInvalidTemplate + ": ", "spec.volumeClaimTemplates[0] (data)", "spec.resources.requests.storage", "8Ei"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Stalled: %s, want it to contain %q", msg, want)
		}
	}
	after := claim(t, c, ns, "data-ledger-0")
	if r := request(after); after.ResourceVersion != before || r.String() != "10Gi" {
		t.Errorf("PVC changed to %s (resourceVersion %s → %s); it must not be patched", r.String(), before, after.ResourceVersion)
	}
	if n := len(events(t, c, ns, "ClaimPatched")); n != 0 {
		t.Errorf("%d patches, want none", n)
	}
}

// A StatefulSet of more claims than the limit is Stalled before any work;
// the controller goes on with the others.
func TestTooManyClaimsStallWhileOthersRollOut(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	huge := fixtures.StatefulSet(ns, "huge", maxClaims+1, classExpandable, "1Gi")
	// One Pod at a time, and none schedulable: kube-controller-manager
	// creates a single Pod and claim, and waits.
	huge.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	huge.Spec.Template.Spec.NodeSelector = map[string]string{"claimwarden.dev/no-such-node": "true"}
	if err := c.Create(context.Background(), huge); err != nil {
		t.Fatal(err)
	}
	small := fixtures.StatefulSet(ns, "small", 1, classExpandable, "1Gi")
	createReady(t, c, small)
	if err := fixtures.ReplaceTemplates(context.Background(), c, client.ObjectKeyFromObject(small), fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, c, client.ObjectKeyFromObject(small), "Ready at 2Gi", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Compatible == 1 && v.Status.Claims[0].To == "2Gi"
	})

	vcr := waitRollout(t, c, client.ObjectKeyFromObject(huge), "Stalled", stalled)
	msg := condition(vcr, meta.StalledCondition)
	for _, want := range []string{v1alpha1.ReasonInvalidTemplate + ": ", "spec.replicas 9", "limit of 8 claims per StatefulSet", "maxClaimsPerStatefulSet"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Stalled: %s, want it to contain %q", msg, want)
		}
	}
	if len(vcr.Status.Claims) != 0 {
		t.Errorf("%d claims in the status of a refused StatefulSet, want none", len(vcr.Status.Claims))
	}
	for _, e := range events(t, c, ns, "ClaimPatched") {
		if strings.Contains(e.Note, "huge") {
			t.Errorf("patched a claim of the refused StatefulSet: %s", e.Note)
		}
	}
}
