package rollout

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func TestPodCacheSelectsAStatefulSetsPodsOnly(t *testing.T) {
	o := podCacheOptions([]string{"team-a"})
	if !o.DefaultLabelSelector.Matches(labels.Set{appsv1.StatefulSetPodNameLabel: "db-0", "app": "db"}) {
		t.Error("a StatefulSet's Pod is not cached")
	}
	if o.DefaultLabelSelector.Matches(labels.Set{"app": "web", "pod-template-hash": "5d8f7c9b6"}) {
		t.Error("a Deployment's Pod is cached")
	}
	if _, ok := o.DefaultNamespaces["team-a"]; !ok || len(o.DefaultNamespaces) != 1 {
		t.Errorf("Pods cached in %v, want the configured namespace team-a only", o.DefaultNamespaces)
	}
	if all := podCacheOptions(nil); all.DefaultNamespaces != nil {
		t.Errorf("no namespaces configured, but Pods cached in %v only", all.DefaultNamespaces)
	}
	pod := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "db-0", Labels: map[string]string{appsv1.ControllerRevisionHashLabelKey: "db-1"},
		Annotations:   map[string]string{"sidecar.istio.io/status": "{...}"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}},
	}}
	out, err := o.DefaultTransform(pod)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*metav1.PartialObjectMetadata)
	if got.Annotations != nil || got.ManagedFields != nil || got.Labels[appsv1.ControllerRevisionHashLabelKey] != "db-1" {
		t.Errorf("transformed Pod metadata %+v: want its labels kept, its annotations and managed fields gone", got.ObjectMeta)
	}
}
