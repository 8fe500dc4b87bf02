package install

import (
	"os"
	"path/filepath"
	"testing"
)

// config/default as kubectl apply -k renders it, and with every optional
// component, validates strictly.
func TestConfigDefaultValidates(t *testing.T) {
	root := repoRoot(t)
	kubectl := tool(t, "kubectl")
	t.Run("default", func(t *testing.T) {
		out := run(t, kubectl, "kustomize", filepath.Join(root, "config/default"))
		if err := validate(t, out); err != nil {
			t.Error(err)
		}
		// make release renders install.yaml with test/release (no kubectl needed).
		if rel := run(t, tool(t, "release"), "kustomize", filepath.Join(root, "config/default")); string(rel) != string(out) {
			t.Error("release kustomize config/default differs from kubectl kustomize")
		}
		for _, o := range objects(t, out) {
			for _, k := range []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/part-of", "app.kubernetes.io/managed-by"} {
				if o.GetLabels()[k] == "" {
					t.Errorf("%s %s lacks label %s", o.GetKind(), o.GetName(), k)
				}
			}
		}
	})
	t.Run("all-components", func(t *testing.T) {
		overlay := t.TempDir()
		rel, err := filepath.Rel(overlay, root)
		if err != nil {
			t.Fatal(err)
		}
		k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- " + rel + "/config/default\ncomponents:\n"
		for _, c := range []string{"convergence", "flux", "flux-substitute-configmaps", "flux-substitute-secrets", "helm", "argocd", "gitstatus", "autoresize"} {
			k += "- " + rel + "/config/components/" + c + "\n"
		}
		if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(k), 0o644); err != nil {
			t.Fatal(err)
		}
		out := run(t, kubectl, "kustomize", "--load-restrictor", "LoadRestrictionsNone", overlay)
		if find(objects(t, out), "ValidatingAdmissionPolicy", "claimwarden-flux-requestedat-only") == nil {
			t.Fatal("the overlay did not add the components")
		}
		if err := validate(t, out); err != nil {
			t.Error(err)
		}
	})
}
