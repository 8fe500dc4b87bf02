package rollout_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// Issue 29, item 2: what the server supports is read from the server, and
// agrees with what the server does: it keeps a claim's class exactly where
// discovery says it serves VolumeAttributesClasses, and the dry run of a
// lowered request answers as the real patch does.
func TestServerSupportIsReadFromTheServer(t *testing.T) {
	c := started(t)
	ctx := context.Background()
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "probe", 1, classExpandable, "1Gi")
	createReady(t, c, sts)
	pvc := claim(t, c, ns, "data-probe-0")

	got := rollout.ServerSupport(ctx, env.Config, c, []corev1.PersistentVolumeClaim{*pvc})
	keeps := keepsClaimVAC(t, c, ns)
	if got.VolumeAttributesClasses == nil || *got.VolumeAttributesClasses != keeps {
		t.Errorf("VolumeAttributesClasses %v, but the server keeps a claim's class: %v", got.VolumeAttributesClasses, keeps)
	}
	if got.RecoverFromFailedExpansion != nil {
		t.Errorf("recovery %v asked with no claim above its capacity, want unknown", *got.RecoverFromFailedExpansion)
	}

	// A claim whose expansion to 10Gi fails stays at 1Gi of capacity.
	sim.FailResize(ns, pvc.Name, "simulated: no room")
	t.Cleanup(func() { sim.ClearFailure(ns, pvc.Name) })
	if err := c.Patch(ctx, pvc.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"resources":{"requests":{"storage":"10Gi"}}}}`))); err != nil {
		t.Fatal(err)
	}
	pvc = claim(t, c, ns, pvc.Name)
	got = rollout.ServerSupport(ctx, env.Config, c, []corev1.PersistentVolumeClaim{*pvc})
	err := c.Patch(ctx, pvc.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`)))
	switch {
	case err == nil:
		if got.RecoverFromFailedExpansion == nil || !*got.RecoverFromFailedExpansion {
			t.Errorf("recovery %v, but the server lowered the request", got.RecoverFromFailedExpansion)
		}
	case apierrors.IsInvalid(err) && strings.Contains(err.Error(), "can not be less than previous value"):
		t.Logf("compat: the server refuses any lower request (RecoverVolumeExpansionFailure off)")
		if got.RecoverFromFailedExpansion == nil || *got.RecoverFromFailedExpansion {
			t.Errorf("recovery %v, but the server refused the lower request: %v", got.RecoverFromFailedExpansion, err)
		}
	default:
		t.Fatalf("lowering the request: %v", err)
	}
}
