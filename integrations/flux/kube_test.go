package flux

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/kustomize"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// TestSubstituteFrom resolves postBuild.substituteFrom against a real API
// server: ConfigMaps and Secrets in the Kustomization's namespace, a missing
// optional reference skipped, a missing required one an error naming it.
func TestSubstituteFrom(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flux-system"}},
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "cluster-vars"},
			// DATA_SIZE is overridden by spec.postBuild.substitute.
			Data: map[string]string{"REGION": "eu-west", "DATA_SIZE": "1Gi"},
		},
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "cluster-secrets"},
			Data:       map[string][]byte{"TOKEN": []byte("s3cr3t\n")},
		},
	} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	ks := kustomization()
	ks.Spec.PostBuild = &kustomizev1.PostBuild{
		Substitute: map[string]string{"DATA_SIZE": "10Gi"},
		SubstituteFrom: []kustomizev1.SubstituteReference{
			{Kind: "ConfigMap", Name: "cluster-vars"},
			{Kind: "Secret", Name: "cluster-secrets"},
			{Kind: "ConfigMap", Name: "not-there", Optional: true},
		},
	}
	want := map[string]string{"DATA_SIZE": "10Gi", "REGION": "eu-west", "TOKEN": "s3cr3t"}

	r, err := Build(ctx, repoDir, BuildOptions{Kustomization: ks, Reader: c})
	if err != nil {
		t.Fatal(err)
	}
	checkKustomizationBuild(t, r, want)

	t.Run("same objects as kustomize-controller's steps", func(t *testing.T) {
		ref := controllerBuild(t, c, ks)
		setFluxMetadata(ref, ks)
		if diff := cmp.Diff(ref, r.Objects); diff != "" {
			t.Errorf("Build differs from kustomize-controller's sequence (-controller +Build):\n%s", diff)
		}
	})

	t.Run("missing required reference", func(t *testing.T) {
		missing := ks.DeepCopy()
		missing.Spec.PostBuild.SubstituteFrom = append(missing.Spec.PostBuild.SubstituteFrom,
			kustomizev1.SubstituteReference{Kind: "Secret", Name: "absent"})
		_, err := Build(ctx, repoDir, BuildOptions{Kustomization: missing, Reader: c})
		if err == nil || !strings.Contains(err.Error(), "Kustomization flux-system/apps: spec.postBuild.substituteFrom: substitute from 'Secret/absent' error") {
			t.Fatalf("err = %v, want one naming Secret/absent", err)
		}
	})

	t.Run("builder rebuilds when a ConfigMap changes", func(t *testing.T) {
		srv := newArtifactServer(t)
		a := srv.serveDir(t, "/repo.tar.gz", repoDir)
		b := &Builder{Fetcher: &Fetcher{Dir: t.TempDir()}, Reader: c}
		if _, err := b.Build(ctx, ks, a); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Build(ctx, ks, a); err != nil {
			t.Fatal(err)
		}
		if n := b.builds.Load(); n != 1 {
			t.Fatalf("%d builds for unchanged inputs, want 1", n)
		}

		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "flux-system", Name: "cluster-vars"}, cm); err != nil {
			t.Fatal(err)
		}
		cm.Data["REGION"] = "us-east"
		if err := c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		r, err := b.Build(ctx, ks, a)
		if err != nil {
			t.Fatal(err)
		}
		if n := b.builds.Load(); n != 2 {
			t.Errorf("%d builds after a substituteFrom ConfigMap changed, want 2", n)
		}
		if n := srv.requests("/repo.tar.gz"); n != 1 {
			t.Errorf("%d downloads, want 1 (the artifact did not change)", n)
		}
		want := map[string]string{"DATA_SIZE": "10Gi", "REGION": "us-east", "TOKEN": "s3cr3t"}
		checkKustomizationBuild(t, r, want)
	})
}

// controllerBuild builds ks over a copy of testdata/repo with the steps of
// kustomize-controller v1.9.6's reconcile and build: generator.WriteFile
// into the (copied) directory, SecureBuild, SubstituteVariables per resource
// with the live client, YAML out and objects back in.
func controllerBuild(t *testing.T, c client.Client, ks *kustomizev1.Kustomization) []*unstructured.Unstructured {
	t.Helper()
	tmp := t.TempDir()
	if err := os.CopyFS(tmp, os.DirFS(repoDir)); err != nil {
		t.Fatal(err)
	}
	dirPath := filepath.Join(tmp, ks.Spec.Path)
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ks)
	if err != nil {
		t.Fatal(err)
	}
	u := unstructured.Unstructured{Object: m}
	if _, err := kustomize.NewGenerator(tmp, u).WriteFile(dirPath); err != nil {
		t.Fatal(err)
	}
	resMap, err := kustomize.SecureBuild(tmp, dirPath, false)
	if err != nil {
		t.Fatal(err)
	}
	always := ks.GetSubstituteStrategy() == kustomizev1.SubstituteStrategyAlways
	for _, res := range resMap.Resources() {
		out, err := kustomize.SubstituteVariables(context.Background(), c, u, res, kustomize.SubstituteWithAlways(always))
		if err != nil {
			t.Fatal(err)
		}
		if out != nil {
			if _, err := resMap.Replace(res); err != nil {
				t.Fatal(err)
			}
		}
	}
	data, err := resMap.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	var objects []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		o := &unstructured.Unstructured{}
		if err := dec.Decode(o); err == io.EOF {
			return objects
		} else if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, o)
	}
}
