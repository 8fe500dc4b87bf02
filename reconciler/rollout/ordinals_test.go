package rollout_test

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// spec.ordinals (beta and on by default from 1.27, GA in 1.31) numbers the
// Pods and claims from start: a StatefulSet of two replicas from ordinal 3
// has claims data-web-3 and data-web-4, and both grow, the highest first.
func TestStartOrdinalClaimsGrowHighestFirst(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "web", 2, classExpandable, "1Gi")
	sts.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 3}
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	// The premise: the claims are numbered from 3 (claim fails the test otherwise).
	claim(t, c, ns, "data-web-3")
	claim(t, c, ns, "data-web-4")

	if err := fixtures.ReplaceTemplates(context.Background(), c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, c, key, "Ready at 2Gi", func(v *v1alpha1.VolumeClaimRollout) bool {
		done := readyTrue(v) && v.Status.Counts.Compatible == 2 && len(v.Status.Claims) == 2
		for _, cl := range v.Status.Claims {
			done = done && cl.To == "2Gi"
		}
		return done
	})
	for _, name := range []string{"data-web-3", "data-web-4"} {
		if r := request(claim(t, c, ns, name)); r.String() != "2Gi" {
			t.Errorf("%s: request %s, want 2Gi", name, r.String())
		}
	}
	patched := waitEvents(t, c, ns, "ClaimPatched", 2)
	for i, want := range []string{"data-web-4", "data-web-3"} {
		if i >= len(patched) || !strings.Contains(patched[i].Note, want) {
			t.Errorf("patch %d: want %s (highest ordinal first); patches: %v", i, want, notes(patched))
		}
	}
}
