package rollout

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A claim patched from version 7 is behind while the cache still serves
// version 7, caught up (and forgotten) once it serves another or the claim
// is gone.
func TestCacheBehindOwnClaimPatch(t *testing.T) {
	var m memory
	key := types.NamespacedName{Namespace: "shop", Name: "db"}
	at := func(rv string) map[string]*corev1.PersistentVolumeClaim {
		return map[string]*corev1.PersistentVolumeClaim{"data-db-0": {ObjectMeta: metav1.ObjectMeta{Name: "data-db-0", ResourceVersion: rv}}}
	}
	if m.cacheBehind(key, at("7")) {
		t.Fatal("behind before any patch")
	}
	m.patchedClaim(key, "data-db-0", "7")
	if !m.cacheBehind(key, at("7")) {
		t.Error("not behind while the cache serves the version patched from")
	}
	if m.cacheBehind(key, at("8")) {
		t.Error("behind once the cache serves the patched version")
	}
	if m.cacheBehind(key, at("7")) {
		t.Error("the caught-up claim was not forgotten")
	}
	m.patchedClaim(key, "data-db-0", "8")
	if m.cacheBehind(key, nil) {
		t.Error("behind on a claim that is gone")
	}
	if r, _ := m.m.Load(key); len(r.(*remembered).patchedFrom) != 0 {
		t.Errorf("entries left: %v", r.(*remembered).patchedFrom)
	}
}
