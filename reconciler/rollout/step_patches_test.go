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
// side by side rather than one round trip after the other, and still
// patches each claim exactly once.
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

	patches := 0
	for k, n := range controllerClient.writesIn(ns) {
		if n -= before[k]; strings.HasPrefix(k, "apply *v1.PersistentVolumeClaimApplyConfiguration/data-web-") {
			patches += n
			if n != 1 {
				t.Errorf("%s: %d patches, want 1", k, n)
			}
		}
	}
	if patches != 3 {
		t.Errorf("%d claim patches, want 3", patches)
	}
	// One after the other, never more than one is in flight.
	if most := controllerClient.mostApplyingIn(ns); most < 2 {
		t.Errorf("at most %d claim patch in flight at once: the step's patches were sent one after the other", most)
	}
}
