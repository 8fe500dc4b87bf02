package argocd

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
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
// holds.
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
			sts := &appsv1.StatefulSet{}
			if err := json.Unmarshal([]byte(it.TargetState), sts); err != nil {
				return nil, fmt.Errorf("StatefulSet %s: targetState: %w", m.Key, err)
			}
			if sts.Kind != "StatefulSet" || sts.Name != it.Name {
				return nil, fmt.Errorf("StatefulSet %s: targetState is %s %q", m.Key, sts.Kind, sts.Name)
			}
			if sts.Namespace == "" {
				sts.Namespace = it.Namespace
			}
			m.Target = sts
		}
		out = append(out, m)
	}
	return out, nil
}
