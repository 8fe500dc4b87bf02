package flux

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// writeTree writes files (path: content) under a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// configMapWithLabels is a ConfigMap of n label keys, in flow style.
func configMapWithLabels(n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: many\n  labels: {")
	for i := range n {
		fmt.Fprintf(&b, "k%d: v,", i)
	}
	b.WriteString("}\n")
	return b.String()
}

// aliasBomb is the issue's: 5,000 aliases to a 100 KB string, in 125 KB.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\n  annotations:\n    a: &big " + strings.Repeat("x", 100<<10) + "\ndata:\n  list: [")
	for range 5000 {
		b.WriteString("*big,")
	}
	b.WriteString("]\n")
	return b.String()
}

var sts = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\nspec:\n  replicas: 1\n"

// TestBuildBoundsInput builds each attack of the issue on a watched
// repository under a Kustomization: the build fails naming the
// Kustomization, the file and the limit, having allocated far less than
// the Deployment's memory.
func TestBuildBoundsInput(t *testing.T) {
	bigDoc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  x: " + strings.Repeat("y", 50<<20) + "\n"
	manyFiles := map[string]string{"apps/kustomization.yaml": "resources:\n"}
	for i := range 10 {
		name := fmt.Sprintf("cm%d.yaml", i)
		manyFiles["apps/kustomization.yaml"] += "- " + name + "\n"
		manyFiles["apps/"+name] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm%d\ndata:\n  x: %s\n", i, strings.Repeat("y", 2<<20))
	}
	cases := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"50 MB of YAML in a file", map[string]string{
			"apps/kustomization.yaml": "resources:\n- sts.yaml\n- big.yaml\n", "apps/sts.yaml": sts, "apps/big.yaml": bigDoc,
		}, []string{"apps/big.yaml", "over the limit of 4194304 bytes per file"}},
		{"20 MB of YAML in files", manyFiles, []string{"more than 8388608 bytes of files"}},
		{"aliases", map[string]string{
			"apps/kustomization.yaml": "resources:\n- bomb.yaml\n", "apps/bomb.yaml": aliasBomb(),
		}, []string{"apps/bomb.yaml", "limit"}},
		{"3M label keys", map[string]string{
			"apps/kustomization.yaml": "resources:\n- many.yaml\n", "apps/many.yaml": configMapWithLabels(3_000_000),
		}, []string{"apps/many.yaml", "over the limit of 4194304 bytes per file"}},
		{"label keys within the file size", map[string]string{
			"apps/kustomization.yaml": "resources:\n- many.yaml\n", "apps/many.yaml": configMapWithLabels(300_000),
		}, []string{"apps/many.yaml", "more than 600000 YAML nodes"}},
		{"48 MB of ---", map[string]string{
			"apps/kustomization.yaml": "resources:\n- docs.yaml\n", "apps/docs.yaml": strings.Repeat("---\n", 12<<20),
		}, []string{"apps/docs.yaml", "over the limit of 4194304 bytes per file"}},
		{"documents within the file size", map[string]string{
			"apps/kustomization.yaml": "resources:\n- docs.yaml\n", "apps/docs.yaml": strings.Repeat("---\n", 1<<20),
		}, []string{"apps/docs.yaml", "more than 10000 YAML documents"}},
		{"a huge kustomization.yaml", map[string]string{
			"apps/kustomization.yaml": "resources:\n- sts.yaml\ncommonAnnotations:\n  a: &a " + strings.Repeat("z", 100<<10) + "\n  b: [" + strings.Repeat("*a,", 5000) + "]\n", "apps/sts.yaml": sts,
		}, []string{"apps/kustomization.yaml", "limit"}},
		{"a kustomization.yaml the build does not use", map[string]string{
			"apps/kustomization.yaml": "resources:\n- sts.yaml\n", "apps/sts.yaml": sts,
			"other/kustomization.yaml": "commonLabels:\n  a: &a " + strings.Repeat("z", 100<<10) + "\ncommonAnnotations: {b: *a}\nlabels: [" + strings.Repeat("*a,", 5000) + "]\n",
		}, []string{"other/kustomization.yaml", "limit"}},
		{"plain manifests without a kustomization.yaml", map[string]string{
			"apps/sts.yaml": sts, "apps/bomb.yaml": aliasBomb(),
		}, []string{"apps/bomb.yaml", "limit"}},
	}
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "apps"},
		Spec:       kustomizev1.KustomizationSpec{Path: "./apps"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := writeTree(t, c.files)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Build(context.Background(), root, BuildOptions{Kustomization: ks})
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatal("the build succeeded")
			}
			for _, want := range append([]string{"Kustomization flux-system/apps"}, c.want...) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
				t.Errorf("the refused build allocated %d MiB", alloc>>20)
			}
		})
	}
}

// TestBuildBoundsOutput: objects that kustomize makes from little input
// (generators) are bounded by the output's limits.
func TestBuildBoundsOutput(t *testing.T) {
	var k strings.Builder
	k.WriteString("configMapGenerator:\n")
	for i := range 60 {
		fmt.Fprintf(&k, "- name: cm%d\n  literals: [k=%s]\n", i, strings.Repeat("v", 100))
	}
	root := writeTree(t, map[string]string{"kustomization.yaml": k.String()})
	for _, c := range []struct {
		limits Limits
		want   string
	}{
		{Limits{Objects: 50}, "60 objects, over the limit of 50"},
		{Limits{OutputBytes: 2000}, "more than 2000 bytes of objects"},
	} {
		_, err := Build(context.Background(), root, BuildOptions{Limits: c.limits})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.limits, err, c.want)
		}
	}
	if _, err := Build(context.Background(), root, BuildOptions{}); err != nil {
		t.Errorf("within the default limits: %v", err)
	}
}

// TestBuildWithinLimits: an ordinary repository builds, aliases included.
func TestBuildWithinLimits(t *testing.T) {
	root := writeTree(t, map[string]string{
		"kustomization.yaml": "resources:\n- sts.yaml\n- cm.yaml\n",
		"sts.yaml":           sts,
		"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  labels: &l {app: db}\n  annotations: *l\n",
	})
	r, err := Build(context.Background(), root, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Objects) != 2 {
		t.Errorf("%d objects, want 2", len(r.Objects))
	}
}
