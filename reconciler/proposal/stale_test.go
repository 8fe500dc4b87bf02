package proposal

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/testenv"
)

func withTemplate(p Proposal, size string) Proposal {
	replicas := int32(1)
	labels := map[string]string{"app": p.StatefulSet.Name}
	p.StatefulSet.Spec = appsv1.StatefulSetSpec{
		Replicas: &replicas,
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "registry.example/db:1"}}},
		},
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
			ObjectMeta: metav1.ObjectMeta{Name: "data"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
			},
		}},
	}
	return p
}

// Against the live objects of a real API server: a proposal the StatefulSet
// was converged to stays, one it was not (Git went back) goes, a kept one
// and one whose StatefulSet is absent (mid re-create) stay.
func TestDropUnconverged(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}); err != nil {
		t.Fatal(err)
	}
	s := NewStore()
	owner := Owner{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"}
	for name, sizes := range map[string][2]string{
		"converged": {"2Gi", "2Gi"}, // live, proposed
		"reverted":  {"1Gi", "4Gi"},
		"kept":      {"1Gi", "4Gi"},
	} {
		live := withTemplate(proposalOf("shop", name, "apps", "r2"), sizes[0])
		if err := c.Create(ctx, live.StatefulSet); err != nil {
			t.Fatal(err)
		}
		s.Set(ctx, withTemplate(proposalOf("shop", name, "apps", "r2"), sizes[1]))
	}
	s.Set(ctx, withTemplate(proposalOf("shop", "recreating", "apps", "r2"), "4Gi"))
	drain(s)

	keep := map[types.NamespacedName]bool{{Namespace: "shop", Name: "kept"}: true}
	if err := s.DropUnconverged(ctx, c, owner, keep); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"converged": true, "reverted": false, "kept": true, "recreating": true} {
		if _, ok := s.Get(types.NamespacedName{Namespace: "shop", Name: name}); ok != want {
			t.Errorf("proposal for %s present = %v, want %v", name, ok, want)
		}
	}
}
