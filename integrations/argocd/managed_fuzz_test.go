package argocd

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// FuzzDecodeManagedStatefulSets: whatever Argo CD (or whoever answers in
// its place) returns, decoding does not panic, yields only the StatefulSets
// listed, each target the StatefulSet its item names, in its namespace,
// with sizes the diff counts in bytes.
func FuzzDecodeManagedStatefulSets(f *testing.F) {
	f.Add([]byte(managedAnswer))
	for _, s := range []string{
		`{"items":[{"group":"apps","kind":"StatefulSet","namespace":"shop","name":"web","targetState":"{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"web\",\"namespace\":\"other\"}}"}]}`,
		`{"items":[{"group":"apps","kind":"StatefulSet","namespace":"shop","name":"web","targetState":"{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"web\"},\"spec\":{\"volumeClaimTemplates\":[{\"metadata\":{\"name\":\"d\"},\"spec\":{\"resources\":{\"requests\":{\"storage\":\"1E99999999\"}}}}]}}"}]}`,
		`{"items":[{"group":"apps","kind":"StatefulSet","name":"web","targetState":"[]"}]}`,
		`{"items":[{"group":"apps","kind":"StatefulSet","name":"web","targetState":"null"}]}`,
		`{"items":null}`, `{"items":[{}]}`, `[]`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := decodeManagedStatefulSets(body)
		if err != nil {
			return
		}
		var listed managedResources
		if err := json.Unmarshal(body, &listed); err != nil || len(got) > len(listed.Items) {
			t.Fatalf("%d StatefulSets from an answer of %d items (%v)", len(got), len(listed.Items), err)
		}
		for _, m := range got {
			if m.Target == nil {
				continue
			}
			if m.Target.Name != m.Key.Name || (m.Key.Namespace != "" && m.Target.Namespace != m.Key.Namespace) {
				t.Fatalf("item %s has the target %s/%s", m.Key, m.Target.Namespace, m.Target.Name)
			}
			for _, tmpl := range m.Target.Spec.VolumeClaimTemplates {
				q := tmpl.Spec.Resources.Requests[corev1.ResourceStorage]
				if n, err := diff.Bytes(q); err != nil || n <= 0 {
					t.Fatalf("item %s accepted with template %q of storage %s: %d, %v", m.Key, tmpl.Name, q.String(), n, err)
				}
			}
		}
	})
}
