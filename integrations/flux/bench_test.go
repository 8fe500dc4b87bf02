package flux

import (
	"context"
	"fmt"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const benchStatefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db-%[1]d
  labels: {app: db-%[1]d}
spec:
  serviceName: db-%[1]d
  replicas: 3
  selector:
    matchLabels: {app: db-%[1]d}
  template:
    metadata:
      labels: {app: db-%[1]d}
    spec:
      containers:
        - name: postgres
          image: postgres:16
  volumeClaimTemplates:
    - metadata: {name: data}
      spec:
        accessModes: [ReadWriteOnce]
        storageClassName: ${STORAGE_CLASS}
        resources:
          requests: {storage: 10Gi}
    - metadata: {name: wal}
      spec:
        accessModes: [ReadWriteOnce]
        resources:
          requests: {storage: 2Gi}
`

// BenchmarkBuild builds a directory of 100 StatefulSet files without a
// kustomization.yaml (Flux generates one): plainly, through a Kustomization
// with a name prefix, target namespace, commonMetadata and a postBuild
// substitution, and as a Builder cache hit.
func BenchmarkBuild(b *testing.B) {
	dir := b.TempDir()
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("sts-%03d.yaml", i)] = fmt.Sprintf(benchStatefulSet, i)
	}
	writeFiles(b, dir, files)
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "dbs", UID: "u", Generation: 1},
		Spec: kustomizev1.KustomizationSpec{
			Path:            "./",
			NamePrefix:      "prod-",
			TargetNamespace: "dbs",
			CommonMetadata:  &kustomizev1.CommonMetadata{Labels: map[string]string{"env": "prod"}},
			PostBuild:       &kustomizev1.PostBuild{Substitute: map[string]string{"STORAGE_CLASS": "fast"}},
		},
	}
	ctx := context.Background()
	check := func(r *Result, err error) {
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Objects) != 100 {
			b.Fatalf("%d objects, want 100", len(r.Objects))
		}
	}

	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			check(Build(ctx, dir, BuildOptions{}))
		}
	})
	b.Run("kustomization", func(b *testing.B) {
		for b.Loop() {
			check(Build(ctx, dir, BuildOptions{Kustomization: ks}))
		}
	})
	b.Run("builder-cached", func(b *testing.B) {
		srv := newArtifactServer(b)
		a := srv.serveDir(b, "/dbs.tar.gz", dir)
		builder := &Builder{Fetcher: &Fetcher{Dir: b.TempDir()}}
		check(builder.Build(ctx, ks, a))
		for b.Loop() {
			check(builder.Build(ctx, ks, a))
		}
		if n := builder.builds.Load(); n != 1 {
			b.Fatalf("%d builds, want 1", n)
		}
	})
}
