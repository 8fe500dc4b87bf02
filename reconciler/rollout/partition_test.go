package rollout_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// A partitioned StatefulSet is a canary for volume changes as for Pods: the
// claims below the partition wait until it moves, then follow highest
// ordinal first.
func TestPartitionHoldsClaimsUntilItMoves(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "canary", 3, classExpandable, "1Gi")
	sts.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{
		Type:          appsv1.RollingUpdateStatefulSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](2)},
	}
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	ctx := context.Background()

	if err := fixtures.ReplaceTemplates(ctx, c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "Partitioned with the canary compatible", func(v *v1alpha1.VolumeClaimRollout) bool {
		return strings.HasPrefix(condition(v, meta.ReadyCondition), v1alpha1.ReasonPartitioned) && v.Status.Counts.Compatible == 1
	})
	if msg := condition(vcr, meta.ReadyCondition); !strings.Contains(msg, "partition 2 holds 2 claim(s) of ordinals below 2") {
		t.Errorf("Ready: %s, want the partition named", msg)
	}
	for _, cl := range vcr.Status.Claims {
		switch cl.Name {
		case "data-canary-2":
			if cl.Phase != v1alpha1.ClaimCompatible {
				t.Errorf("%s: %s %q, want Compatible", cl.Name, cl.Phase, cl.Message)
			}
		default:
			if cl.Phase != v1alpha1.ClaimPending || !strings.Contains(cl.Message, "partition 2") {
				t.Errorf("%s: %s %q, want Pending naming the partition", cl.Name, cl.Phase, cl.Message)
			}
		}
	}
	for _, name := range []string{"data-canary-0", "data-canary-1"} {
		if r := request(claim(t, c, ns, name)); r.String() != "1Gi" {
			t.Errorf("%s patched to %s below the partition", name, r.String())
		}
	}
	if n := len(events(t, c, ns, v1alpha1.ReasonClaimPatched)); n != 1 {
		t.Fatalf("%d patches while partitioned, want 1 (the canary)", n)
	}

	var live appsv1.StatefulSet
	if err := c.Get(ctx, key, &live); err != nil {
		t.Fatal(err)
	}
	moved := live.DeepCopy()
	moved.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](0)
	if err := c.Patch(ctx, moved, client.MergeFrom(&live)); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, c, key, "Ready at 2Gi once the partition moved", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Compatible == 3
	})
	patched := waitEvents(t, c, ns, v1alpha1.ReasonClaimPatched, 3)
	if len(patched) != 3 {
		t.Fatalf("want exactly 3 patches, got %d", len(patched))
	}
	for i, want := range []string{"data-canary-2", "data-canary-1", "data-canary-0"} {
		if !strings.Contains(patched[i].Note, want) {
			t.Errorf("patch %d: %q, want %s (the canary, then highest ordinal first)", i, patched[i].Note, want)
		}
	}
}
