package flux

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/kustomize"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kustomization is a Flux Kustomization over testdata/repo using every
// field Build honours except substituteFrom (see kube_test.go).
func kustomization() *kustomizev1.Kustomization {
	return &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "apps", UID: "0b5e6f4c-1d2e-4f3a-9b8c-7d6e5f4a3b2c", Generation: 1},
		Spec: kustomizev1.KustomizationSpec{
			Path:            "./apps",
			NamePrefix:      "pre-",
			NameSuffix:      "-suf",
			TargetNamespace: "db",
			Images:          []kustomize.Image{{Name: "postgres", NewTag: "17"}},
			Patches: []kustomize.Patch{{
				Patch:  `[{"op": "replace", "path": "/spec/replicas", "value": 3}]`,
				Target: &kustomize.Selector{Kind: "StatefulSet"},
			}},
			Components: []string{"../components/backup"},
			CommonMetadata: &kustomizev1.CommonMetadata{
				Labels:      map[string]string{"cost-centre": "42"},
				Annotations: map[string]string{"contact": "dba@example.org"},
			},
			PostBuild: &kustomizev1.PostBuild{
				Substitute: map[string]string{"DATA_SIZE": "10Gi", "REGION": "eu-west", "TOKEN": "t0k3n"},
			},
		},
	}
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetNamespace() == namespace && o.GetName() == name {
			return o
		}
	}
	var have []string
	for _, o := range objs {
		have = append(have, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	t.Fatalf("no %s %s/%s among %v", kind, namespace, name, have)
	return nil
}

func field(t *testing.T, o *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(o.Object, path...)
	if err != nil || !ok {
		t.Fatalf("%s %s: no field %s (%v)", o.GetKind(), o.GetName(), strings.Join(path, "."), err)
	}
	return v
}

func claimTemplate(t *testing.T, sts *unstructured.Unstructured) map[string]any {
	t.Helper()
	vcts := field(t, sts, "spec", "volumeClaimTemplates").([]any)
	return vcts[0].(map[string]any)
}

// checkKustomizationBuild checks a build of kustomization() over
// testdata/repo; substituted holds the variables the build was given.
func checkKustomizationBuild(t *testing.T, r *Result, substituted map[string]string) {
	t.Helper()
	if len(r.Objects) != 2 {
		t.Errorf("%d objects, want the StatefulSet and the Service", len(r.Objects))
	}
	find(t, r.Objects, "Service", "db", "pre-pg-suf")
	sts := find(t, r.Objects, "StatefulSet", "db", "pre-pg-suf")

	if got := field(t, sts, "spec", "template", "spec", "containers").([]any)[0].(map[string]any)["image"]; got != "postgres:17" {
		t.Errorf("image = %v, want postgres:17 (spec.images)", got)
	}
	if got := field(t, sts, "spec", "replicas"); got != int64(3) {
		t.Errorf("replicas = %v (%T), want 3 (spec.patches)", got, got)
	}
	ann := sts.GetAnnotations()
	if ann["backup"] != "enabled" {
		t.Errorf("annotations %v lack backup=enabled (spec.components)", ann)
	}
	if ann["contact"] != "dba@example.org" {
		t.Errorf("annotations %v lack commonMetadata's contact", ann)
	}
	if ann["token"] != substituted["TOKEN"] || ann["environment"] != "dev" {
		t.Errorf("annotations %v: token, environment = %q, %q; want %q, dev (default)", ann, ann["token"], ann["environment"], substituted["TOKEN"])
	}
	labels := sts.GetLabels()
	for k, v := range map[string]string{
		"cost-centre": "42", "team": "storage", "tier": "database", "owner": "ops",
		LabelKustomizationName: "apps", LabelKustomizationNamespace: "flux-system",
	} {
		if labels[k] != v {
			t.Errorf("StatefulSet label %s = %q, want %q (all labels: %v)", k, labels[k], v, labels)
		}
	}

	vct := claimTemplate(t, sts)
	vctLabels := vct["metadata"].(map[string]any)["labels"].(map[string]any)
	if vctLabels["team"] != "storage" {
		t.Errorf("volumeClaimTemplate labels %v lack commonLabels' team=storage", vctLabels)
	}
	if vctLabels["region"] != substituted["REGION"] {
		t.Errorf("volumeClaimTemplate region = %v, want %q", vctLabels["region"], substituted["REGION"])
	}
	if _, ok := vctLabels["cost-centre"]; ok {
		t.Errorf("commonMetadata reached a claim template: %v", vctLabels)
	}
	if got := vct["spec"].(map[string]any)["resources"].(map[string]any)["requests"].(map[string]any)["storage"]; got != substituted["DATA_SIZE"] {
		t.Errorf("claim template storage = %v, want %q", got, substituted["DATA_SIZE"])
	}
	podLabels := field(t, sts, "spec", "template", "metadata", "labels").(map[string]any)
	if podLabels["tier"] != "database" || podLabels["team"] != "storage" {
		t.Errorf("pod template labels %v lack tier (labels includeTemplates) or team (commonLabels)", podLabels)
	}

	// team reached the claim template (commonLabels), tier the pod template
	// (includeTemplates); owner (plain labels entry), commonMetadata's and
	// Flux's labels stay on top-level metadata.
	if !slices.Contains(r.TemplateLabelKeys, "team") || !slices.Contains(r.TemplateLabelKeys, "tier") {
		t.Errorf("TemplateLabelKeys %v lack team or tier", r.TemplateLabelKeys)
	}
	for _, k := range []string{"owner", "cost-centre", LabelKustomizationName} {
		if slices.Contains(r.TemplateLabelKeys, k) {
			t.Errorf("TemplateLabelKeys %v hold %s, which reaches no template", r.TemplateLabelKeys, k)
		}
	}
}

func TestBuildKustomization(t *testing.T) {
	r, err := Build(context.Background(), repoDir, BuildOptions{Kustomization: kustomization()})
	if err != nil {
		t.Fatal(err)
	}
	checkKustomizationBuild(t, r, kustomization().Spec.PostBuild.Substitute)
}

func TestBuildPlainDirectory(t *testing.T) {
	dir := filepath.Join(repoDir, "plain")
	r, err := Build(context.Background(), dir, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Objects) != 2 {
		t.Errorf("%d objects, want 2", len(r.Objects))
	}
	sts := find(t, r.Objects, "StatefulSet", "", "cache")
	find(t, r.Objects, "ConfigMap", "", "cache-config") // found in a subdirectory
	if _, ok := sts.GetLabels()[LabelKustomizationName]; ok {
		t.Errorf("a build without a Kustomization got Flux's labels: %v", sts.GetLabels())
	}
	if len(r.TemplateLabelKeys) != 0 {
		t.Errorf("TemplateLabelKeys = %v for a directory without kustomization files", r.TemplateLabelKeys)
	}
	if _, err := os.Stat(filepath.Join(dir, "kustomization.yaml")); !os.IsNotExist(err) {
		t.Errorf("the build wrote a kustomization.yaml into the source directory (%v)", err)
	}

	// The same directory through a Kustomization's spec.path.
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "cache"},
		Spec:       kustomizev1.KustomizationSpec{Path: "plain", TargetNamespace: "cache"},
	}
	r, err = Build(context.Background(), repoDir, BuildOptions{Kustomization: ks})
	if err != nil {
		t.Fatal(err)
	}
	find(t, r.Objects, "StatefulSet", "cache", "cache")
}

func TestBuildLeavesExistingKustomizationAlone(t *testing.T) {
	path := filepath.Join(repoDir, "apps", "kustomization.yaml")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(context.Background(), repoDir, BuildOptions{Kustomization: kustomization()}); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before) {
		t.Errorf("the build rewrote %s:\n%s", path, after)
	}
}

func TestBuildErrors(t *testing.T) {
	withPath := func(p string) *kustomizev1.Kustomization {
		ks := kustomization()
		ks.Spec.Path = p
		return ks
	}
	strict := kustomization()
	delete(strict.Spec.PostBuild.Substitute, "TOKEN")
	fromNothing := kustomization()
	fromNothing.Spec.PostBuild.SubstituteFrom = []kustomizev1.SubstituteReference{{Kind: "ConfigMap", Name: "vars"}}
	badPatch := kustomization()
	badPatch.Spec.Patches = []kustomize.Patch{{Patch: `[{"op": "replace", "path": "/spec/nothing/here", "value": 1}]`, Target: &kustomize.Selector{Kind: "StatefulSet"}}}

	for _, tc := range []struct {
		name   string
		ks     *kustomizev1.Kustomization
		strict bool
		want   string
	}{
		{"missing path", withPath("./missing"), false, `Kustomization flux-system/apps: spec.path "./missing": not found in the source artifact`},
		{"path climbing out", withPath("../outside"), false, `Kustomization flux-system/apps: spec.path "../outside": outside the source artifact`},
		{"path to a file", withPath("./base/service.yaml"), false, `spec.path "./base/service.yaml": not a directory`},
		{"resource outside the artifact", withPath("./escape"), false, "Kustomization flux-system/apps: kustomize build failed: "},
		{"strict substitution", strict, true, "Kustomization flux-system/apps: spec.postBuild: StatefulSet db/pre-pg-suf: envsubst error: variable substitution failed: variable not set (strict mode): \"TOKEN\""},
		{"substituteFrom without a reader", fromNothing, false, "Kustomization flux-system/apps: spec.postBuild.substituteFrom: no Kubernetes reader"},
		{"patch that does not apply", badPatch, false, "Kustomization flux-system/apps: kustomize build failed: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(context.Background(), repoDir, BuildOptions{Kustomization: tc.ks, StrictSubstitutions: tc.strict})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			t.Log(err)
		})
	}

	if _, err := Build(context.Background(), "testdata/none", BuildOptions{}); err == nil || !strings.Contains(err.Error(), "testdata/none") {
		t.Errorf("a missing root: err = %v", err)
	}
}
