package argocd

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/claimwarden/claimwarden/integrations/manifests"
)

// managedResources is the answer of managed-resources: Argo CD's
// ResourceDiff items, whose states are JSON documents inside JSON strings.
type managedResources struct {
	Items []struct {
		Group       string `json:"group"`
		Kind        string `json:"kind"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		TargetState string `json:"targetState"`
	} `json:"items"`
}

// decodeManagedStatefulSets decodes the StatefulSets of a managed-resources
// answer. An empty or "null" targetState is a StatefulSet Git no longer
// holds. A target state is Git's manifest as Argo CD rendered it, so it is
// checked as check and the Flux integration check manifests (bounded
// quantities, sizes the diff can count, named templates) before it is
// typed.
func decodeManagedStatefulSets(body []byte) ([]ManagedStatefulSet, error) {
	var mr managedResources
	if err := json.Unmarshal(body, &mr); err != nil {
		return nil, err
	}
	var out []ManagedStatefulSet
	for _, it := range mr.Items {
		if !isStatefulSet(it.Group, it.Kind) {
			continue
		}
		m := ManagedStatefulSet{Key: types.NamespacedName{Namespace: it.Namespace, Name: it.Name}}
		if it.TargetState != "" && it.TargetState != "null" {
			// utiljson keeps integers int64, as manifests decodes them.
			u := &unstructured.Unstructured{}
			if err := utiljson.Unmarshal([]byte(it.TargetState), &u.Object); err != nil {
				return nil, fmt.Errorf("StatefulSet %s: targetState: %w", m.Key, err)
			}
			if u.GetKind() != "StatefulSet" || u.GetName() != it.Name {
				return nil, fmt.Errorf("StatefulSet %s: targetState is %s %q", m.Key, u.GetKind(), u.GetName())
			}
			// An unset namespace is the Application's destination, which
			// Argo CD reports with the item; manifests would make it "default".
			ns := u.GetNamespace()
			if ns == "" {
				ns = it.Namespace
				u.SetNamespace(ns)
			}
			// The item's key is what a sync failure names: a target in
			// another namespace would be proposed for a StatefulSet whose
			// sync did not fail.
			if it.Namespace != "" && ns != it.Namespace {
				return nil, fmt.Errorf("StatefulSet %s: targetState is in namespace %q", m.Key, ns)
			}
			stss, _, err := manifests.StatefulSets(manifests.FromUnstructured([]*unstructured.Unstructured{u}, "targetState"))
			if err != nil {
				return nil, err
			}
			if len(stss) != 1 {
				return nil, fmt.Errorf("StatefulSet %s: targetState has apiVersion %q, not apps/v1", m.Key, u.GetAPIVersion())
			}
			m.Target = stss[0].StatefulSet
			m.Target.Namespace = ns
		}
		out = append(out, m)
	}
	return out, nil
}
