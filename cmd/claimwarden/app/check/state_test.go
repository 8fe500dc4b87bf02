package check

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/claimwarden/claimwarden/policies"
)

// statefulSetYAML is a StatefulSet of one template.
func statefulSetYAML(name, template, size string, replicas int) string {
	return fmt.Sprintf(`---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: %[1]s, namespace: shop}
spec:
  replicas: %[4]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: c, image: x}]}
  volumeClaimTemplates:
  - metadata: {name: %[2]s}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: %[3]s}}}
`, name, template, size, replicas)
}

// TestBaseClaimsNamedAlike: template "data" of "x-web" and template
// "data-x" of "web" both name claims data-x-web-<n>. A claim stands for the
// base StatefulSet defined last, which is made from that StatefulSet's
// template even when another one is checked.
func TestBaseClaimsNamedAlike(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const class = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: std, annotations: {storageclass.kubernetes.io/is-default-class: \"true\"}}\nprovisioner: x\nallowVolumeExpansion: true\n"
	base := write("base.yaml", class+statefulSetYAML("x-web", "data", "1Gi", 3)+statefulSetYAML("web", "data-x", "5Gi", 2))
	proposed := write("proposed.yaml", statefulSetYAML("x-web", "data", "2Gi", 3)+statefulSetYAML("web", "data-x", "5Gi", 2))
	engine, err := policies.New(context.Background(), policies.Options{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(engine.Stop)
	r, err := Run(context.Background(), Options{Files: []string{proposed}, Base: []string{base}, Policies: engine})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range r.StatefulSets {
		if st.Name == "x-web" {
			for _, c := range st.Claims {
				got = append(got, fmt.Sprintf("%s %s→%s %s", c.Name, c.From, c.To, c.Verdict))
			}
		}
	}
	want := []string{"data-x-web-0 5Gi→2Gi denied", "data-x-web-1 5Gi→2Gi denied", "data-x-web-2 1Gi→2Gi allowed"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("claims of x-web: %q, want %q: claims 0 and 1 are web's (5Gi), 2 is x-web's", got, want)
	}
}
