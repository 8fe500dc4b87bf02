package manifests

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestInventoryIDIsFluxs: the ids as kustomize-controller writes them in
// status.inventory.entries[].id (core objects have an empty group).
func TestInventoryIDIsFluxs(t *testing.T) {
	for _, c := range []struct {
		ns, name string
		gk       schema.GroupKind
		want     string
	}{
		{"shop", "db", schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, "shop_db_apps_StatefulSet"},
		{"shop", "web", schema.GroupKind{Group: "helm.toolkit.fluxcd.io", Kind: "HelmRelease"}, "shop_web_helm.toolkit.fluxcd.io_HelmRelease"},
		{"shop", "conf", schema.GroupKind{Kind: "ConfigMap"}, "shop_conf__ConfigMap"},
	} {
		if got := InventoryID(c.ns, c.name, c.gk); got != c.want {
			t.Errorf("InventoryID(%s, %s, %v) = %q, want %q", c.ns, c.name, c.gk, got, c.want)
		}
	}
}
