package flux

import (
	"context"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func tenantKustomization(target string, inventory ...string) *kustomizev1.Kustomization {
	ks := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "apps"}}
	ks.Spec.TargetNamespace = target
	if inventory != nil {
		ks.Status.Inventory = &kustomizev1.ResourceInventory{}
		for _, id := range inventory {
			ks.Status.Inventory.Entries = append(ks.Status.Inventory.Entries, kustomizev1.ResourceRef{ID: id, Version: "v1"})
		}
	}
	return ks
}

func liveStatefulSet(ns, name string, labels map[string]string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
}

// TestKustomizationManagesItsInventoryOnly: the inventory kustomize-controller
// wrote decides, never the labels a StatefulSet's editor can set.
func TestKustomizationManagesItsInventoryOnly(t *testing.T) {
	forged := map[string]string{LabelKustomizationName: "apps", LabelKustomizationNamespace: "tenant-a"}
	for _, c := range []struct {
		name string
		ks   *kustomizev1.Kustomization
		live *appsv1.StatefulSet
		why  string // "" when managed
	}{
		{"in its inventory", tenantKustomization("", "tenant-a_db_apps_StatefulSet"), liveStatefulSet("tenant-a", "db", nil), ""},
		{"another namespace, labelled as its own", tenantKustomization("", "tenant-a_db_apps_StatefulSet"), liveStatefulSet("platform", "db", forged), "not in the inventory"},
		{"no inventory", tenantKustomization(""), liveStatefulSet("tenant-a", "db", forged), "not in the inventory"},
		{"same name, other kind", tenantKustomization("", "tenant-a_db_apps_Deployment"), liveStatefulSet("tenant-a", "db", nil), "not in the inventory"},
		{"outside its targetNamespace", tenantKustomization("tenant-a", "platform_db_apps_StatefulSet"), liveStatefulSet("platform", "db", nil), "spec.targetNamespace"},
		{"inside its targetNamespace", tenantKustomization("tenant-a", "tenant-a_db_apps_StatefulSet"), liveStatefulSet("tenant-a", "db", nil), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := (&Kustomizations{}).Manages(context.Background(), c.ks, c.live)
			switch {
			case c.why == "" && err != nil:
				t.Errorf("Manages = %v, want managed", err)
			case c.why != "" && (err == nil || !strings.Contains(err.Error(), c.why)):
				t.Errorf("Manages = %v, want a refusal saying %q", err, c.why)
			}
		})
	}
}

func TestKustomizationAuthority(t *testing.T) {
	for _, c := range []struct {
		sa, fallback, want string
	}{
		{"deployer", "", "system:serviceaccount:tenant-a:deployer"},
		{"deployer", "default", "system:serviceaccount:tenant-a:deployer"},
		{"", "default", "system:serviceaccount:tenant-a:default"},
		{"", "", ""},
	} {
		ks := tenantKustomization("")
		ks.Spec.ServiceAccountName = c.sa
		id, err := (&Kustomizations{DefaultServiceAccount: c.fallback}).Authority(context.Background(), ks)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if id != nil {
			got = id.User
			if len(id.Groups) != 3 || id.Groups[1] != "system:serviceaccounts:tenant-a" {
				t.Errorf("groups %v, want the service accounts' of tenant-a", id.Groups)
			}
		}
		if got != c.want {
			t.Errorf("serviceAccountName %q, default %q: authority %q, want %q", c.sa, c.fallback, got, c.want)
		}
	}
}
