package rollout_test

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// A step of three claims (maxConcurrentPatches 3) sends its three patches
// side by side rather than one round trip after the other, still patches
// each claim exactly once, says so in one event and writes the status once
// for the step and once at its end.
func TestStepPatchesItsClaimsSideBySide(t *testing.T) {
	c := started(t)
	scopedController(t, "three-at-once", nil, func(o *rollout.Options) { o.MaxConcurrentPatches = 3 })
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "web", 3, classExpandable, "1Gi")
	sts.Labels = map[string]string{"app": "web", scopedLabel: "three-at-once"}
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	before := controllerClient.writesIn(ns)

	if err := fixtures.ReplaceTemplates(context.Background(), c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, c, key, "Ready at 2Gi", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Compatible == 3 && v.Status.Claims[0].To == "2Gi"
	})

	patches, statuses := 0, 0
	for k, n := range controllerClient.writesIn(ns) {
		n -= before[k]
		if k == "status patch of claims *v1alpha1.VolumeClaimRollout/web" {
			statuses = n
		}
		if strings.HasPrefix(k, "apply *v1.PersistentVolumeClaimApplyConfiguration/data-web-") {
			patches += n
			if n != 1 {
				t.Errorf("%s: %d patches, want 1", k, n)
			}
		}
	}
	if patches != 3 {
		t.Errorf("%d claim patches, want 3", patches)
	}
	// The status is written when the step begins and when it ends, not as
	// each of its claims finishes.
	if statuses > 2 {
		t.Errorf("%d status writes of the claims for one step, want at most 2", statuses)
	}
	// One after the other, never more than one is in flight.
	if most := controllerClient.mostApplyingIn(ns); most < 2 {
		t.Errorf("at most %d claim patch in flight at once: the step's patches were sent one after the other", most)
	}
	// One event says what the step did, naming its claims in plan order
	// (the highest ordinal first), not one event each.
	patched := events(t, c, ns, v1alpha1.ReasonClaimPatched)
	if len(patched) != 1 {
		t.Fatalf("%d ClaimPatched events, want 1 for the step of three claims", len(patched))
	}
	if want := "patched 3 PVCs data-web-2, data-web-1, data-web-0: storage 1Gi → 2Gi"; patched[0].Note != want {
		t.Errorf("ClaimPatched note %q, want %q", patched[0].Note, want)
	}
}
