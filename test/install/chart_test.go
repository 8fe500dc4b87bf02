package install

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

const release, namespace = "claimwarden", "claimwarden-system"

func chartDir(t *testing.T) string { return filepath.Join(repoRoot(t), "config/helm/claimwarden") }

func fullValues(t *testing.T) string {
	return filepath.Join(repoRoot(t), "test/install/testdata/values-full.yaml")
}

// template renders the chart as `helm install` would, with extra helm flags.
func template(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	return runErr(tool(t, "helm"), append([]string{"template", release, chartDir(t), "-n", namespace, "--kube-version", kubeVersion}, args...)...)
}

func mustTemplate(t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := template(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return objects(t, out)
}

func TestChartLints(t *testing.T) {
	for name, args := range map[string][]string{"default": nil, "full": {"-f", fullValues(t)}} {
		t.Run(name, func(t *testing.T) {
			run(t, tool(t, "helm"), append([]string{"lint", "--strict", "--kube-version", kubeVersion, chartDir(t)}, args...)...)
		})
	}
}

func TestChartManifestsValidate(t *testing.T) {
	for name, args := range map[string][]string{"default": nil, "full": {"-f", fullValues(t)}} {
		t.Run(name, func(t *testing.T) {
			out, err := template(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(t, out); err != nil {
				t.Error(err)
			}
		})
	}
}

// The schemas are strict: a misspelt field fails, so a pass above means something.
func TestValidationRejectsAnUnknownField(t *testing.T) {
	out, err := template(t)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(out, []byte("terminationGracePeriodSeconds:"), []byte("terminationGracePeriodSecond:"), 1)
	if err := validate(t, bad); err == nil || !strings.Contains(err.Error(), "terminationGracePeriodSecond") {
		t.Errorf("a Deployment with a misspelt field validated: %v", err)
	}
}

func TestChartRulesAreConfigRBACs(t *testing.T) {
	objs := mustTemplate(t, "-f", fullValues(t))
	for _, c := range []struct{ kind, name, file string }{
		{"ClusterRole", "claimwarden", "config/rbac/cluster_role.yaml"},
		{"Role", "claimwarden-own-namespace", "config/rbac/namespace_role.yaml"},
		{"ClusterRole", "claimwarden-view", "config/rbac/aggregate_view_role.yaml"},
		{"ClusterRole", "claimwarden-convergence", "config/components/convergence/role.yaml"},
		{"Role", "claimwarden-journal-key", "config/components/convergence/journal_key_role.yaml"},
		{"ClusterRole", "claimwarden-flux", "config/components/flux/role.yaml"},
		{"ClusterRole", "claimwarden-flux-substitute-configmaps", "config/components/flux-substitute-configmaps/role.yaml"},
		{"ClusterRole", "claimwarden-flux-substitute-secrets", "config/components/flux-substitute-secrets/role.yaml"},
		{"ClusterRole", "claimwarden-helm", "config/components/helm/role.yaml"},
		{"ClusterRole", "claimwarden-argocd", "config/components/argocd/role.yaml"},
		{"Role", "claimwarden-argocd-token", "config/components/argocd/token_role.yaml"},
		{"Role", "claimwarden-gitstatus", "config/components/gitstatus/role.yaml"},
		{"Role", "claimwarden-autoresize", "config/components/autoresize/role.yaml"},
		{"ClusterRole", "claimwarden-restarts", "config/components/restarts/role.yaml"},
		{"ClusterRole", "claimwarden-policy-reports", "config/components/policy-reports/role.yaml"},
	} {
		got := find(objs, c.kind, c.name)
		if got == nil {
			t.Errorf("no %s %s rendered", c.kind, c.name)
			continue
		}
		// The view role is aggregated into view, edit and admin, not bound.
		if find(objs, c.kind+"Binding", c.name) == nil && c.name != "claimwarden-view" {
			t.Errorf("%s %s has no binding", c.kind, c.name)
		}
		data, err := os.ReadFile(filepath.Join(repoRoot(t), c.file))
		if err != nil {
			t.Fatal(err)
		}
		var want, have rbacv1.ClusterRole
		if err := yaml.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, &have); err != nil {
			t.Fatal(err)
		}
		if string(toYAML(t, have.Rules)) != string(toYAML(t, want.Rules)) {
			t.Errorf("%s %s rules differ from %s:\n%s", c.kind, c.name, c.file, toYAML(t, have.Rules))
		}
	}
}

func TestChartIntegrationRBACOnlyWhenOn(t *testing.T) {
	objs := mustTemplate(t)
	for _, o := range objs {
		if k := o.GetKind(); k == "ValidatingAdmissionPolicy" || ((k == "ClusterRole" || k == "Role") && o.GetName() != "claimwarden" && o.GetName() != "claimwarden-own-namespace" && o.GetName() != "claimwarden-view") {
			t.Errorf("default values render %s %s, which belongs to an integration that is off", k, o.GetName())
		}
	}
	flux := mustTemplate(t, "--set", "config.flux.enabled=true")
	if find(flux, "ClusterRole", "claimwarden-flux") == nil || find(flux, "ClusterRole", "claimwarden-convergence") == nil || find(flux, "ClusterRole", "claimwarden-argocd") != nil {
		t.Error("config.flux.enabled does not render the flux and convergence roles alone")
	}
	vap := find(flux, "ValidatingAdmissionPolicy", "claimwarden-flux-requestedat-only")
	if vap == nil || !strings.Contains(string(toYAML(t, vap.Object)), "system:serviceaccount:claimwarden-system:claimwarden") {
		t.Error("the Flux admission policy does not name the chart's ServiceAccount")
	}
	helm := mustTemplate(t, "--set", "config.flux.helmReleases=true")
	if find(helm, "ClusterRole", "claimwarden-helm") == nil || find(helm, "ClusterRole", "claimwarden-convergence") == nil || find(helm, "ClusterRole", "claimwarden-flux") != nil {
		t.Error("config.flux.helmReleases does not render the helm and convergence roles alone")
	}
	vap = find(helm, "ValidatingAdmissionPolicy", "claimwarden-helm-requests-only")
	if vap == nil || !strings.Contains(string(toYAML(t, vap.Object)), "system:serviceaccount:claimwarden-system:claimwarden") {
		t.Error("the HelmRelease admission policy does not name the chart's ServiceAccount")
	}
	// autoresize.hosts' write credentials are read with autoresize on
	// (namespaces opted in), not with hosts alone, and apart from
	// gitStatus.hosts'.
	host := `[{"url":"https://github.com","type":"github","tokenSecretRef":{"name":"w"}}]`
	if find(mustTemplate(t, "--set-json", "config.autoresize.hosts="+host), "Role", "claimwarden-autoresize") != nil {
		t.Error("config.autoresize.hosts without namespaces renders the autoresize Role")
	}
	auto := mustTemplate(t, "--set-json", "config.autoresize.hosts="+host,
		"--set-json", `config.autoresize.namespaces=[{"namespace":"shop","repositoryPrefixes":["https://github.com/example"]}]`)
	role, binding := find(auto, "Role", "claimwarden-autoresize"), find(auto, "RoleBinding", "claimwarden-autoresize")
	if role == nil || binding == nil || role.GetNamespace() != namespace || binding.GetNamespace() != namespace || find(auto, "Role", "claimwarden-gitstatus") != nil {
		t.Error("config.autoresize.namespaces does not render the autoresize Role and RoleBinding alone, in the release namespace")
	}
}

func TestChartHAAndPDB(t *testing.T) {
	if find(mustTemplate(t, "--set", "podDisruptionBudget.enabled=true"), "PodDisruptionBudget", "claimwarden") != nil {
		t.Error("a PodDisruptionBudget with one replica would block every node drain")
	}
	objs := mustTemplate(t, "-f", fullValues(t))
	if find(objs, "PodDisruptionBudget", "claimwarden") == nil {
		t.Error("no PodDisruptionBudget with two replicas")
	}
	if _, err := template(t, "--set", "replicaCount=2", "--set", "config.leaderElection.enabled=false"); err == nil || !strings.Contains(err.Error(), "leaderElection") {
		t.Errorf("two replicas without leader election: %v, want an error naming config.leaderElection", err)
	}
}

func TestChartConfigChecksumRollsThePods(t *testing.T) {
	checksum := func(args ...string) string {
		d := find(mustTemplate(t, args...), "Deployment", "claimwarden")
		v, _, _ := unstructured.NestedString(d.Object, "spec", "template", "metadata", "annotations", "checksum/config")
		return v
	}
	a, b := checksum(), checksum("--set", "config.workers=9")
	if a == "" || a == b {
		t.Errorf("checksum/config %q then %q: a configuration change must change it", a, b)
	}
	cm := find(mustTemplate(t, "--set", "config.workers=9"), "ConfigMap", "claimwarden-config")
	if data, _, _ := unstructured.NestedString(cm.Object, "data", "config.yaml"); !strings.Contains(data, "workers: 9") || !strings.Contains(data, `metricsAddr: :8080`) {
		t.Errorf("config.yaml = %s", data)
	}
}

func TestChartImageAndCRD(t *testing.T) {
	objs := mustTemplate(t, "-f", fullValues(t))
	d := find(objs, "Deployment", "claimwarden")
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if img := containers[0].(map[string]any)["image"]; img != "registry.example.com/platform/claimwarden@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" {
		t.Errorf("image %v, want the digest-pinned reference", img)
	}
	crd := find(objs, "CustomResourceDefinition", "volumeclaimrollouts.claimwarden.dev")
	if crd == nil || crd.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
		t.Error("the CRD is not rendered with helm.sh/resource-policy: keep (uninstall would delete every rollout)")
	}
	for _, o := range objs {
		l := o.GetLabels()
		for _, k := range []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version", "app.kubernetes.io/component", "app.kubernetes.io/part-of", "app.kubernetes.io/managed-by"} {
			if l[k] == "" {
				t.Errorf("%s %s lacks label %s", o.GetKind(), o.GetName(), k)
			}
		}
	}
	if _, err := template(t, "--set", "image.digest=latest"); err == nil {
		t.Error("image.digest=latest passed values.schema.json")
	}
}

// The release-record Secrets are readable only where the values say: a
// ClusterRole with the component's rule, bound by a RoleBinding per namespace,
// for the HelmRelease integration (get) and the plain Helm one (list, watch).
func TestChartHelmReleaseSecretsBoundPerNamespace(t *testing.T) {
	objs := mustTemplate(t, "-f", fullValues(t))
	assertBoundPerNamespace(t, objs, "claimwarden-helm-release-secrets", "config/components/helm/release_secrets_role.yaml", "shop,billing")
	assertBoundPerNamespace(t, objs, "claimwarden-helm-cli", "config/components/helm-cli/role.yaml", "ci-apps")
	if _, err := template(t, "--set", "config.helm.enabled=true"); err == nil || !strings.Contains(err.Error(), "config.helm.namespaces is empty") {
		t.Errorf("config.helm.enabled without namespaces: %v, want an error naming config.helm.namespaces", err)
	}
}

// assertBoundPerNamespace checks that the ClusterRole name has the rules of
// the component file and is bound by RoleBindings in namespaces (joined by
// ","), never cluster-wide.
func assertBoundPerNamespace(t *testing.T, objs []*unstructured.Unstructured, name, file, namespaces string) {
	t.Helper()
	role := find(objs, "ClusterRole", name)
	if role == nil {
		t.Fatalf("no ClusterRole %s rendered", name)
	}
	data, err := os.ReadFile(filepath.Join(repoRoot(t), file))
	if err != nil {
		t.Fatal(err)
	}
	var want, have rbacv1.ClusterRole
	if err := yaml.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(role.Object, &have); err != nil {
		t.Fatal(err)
	}
	if string(toYAML(t, have.Rules)) != string(toYAML(t, want.Rules)) {
		t.Errorf("%s: rules differ from %s's:\n%s", name, file, toYAML(t, have.Rules))
	}
	if find(objs, "ClusterRoleBinding", name) != nil {
		t.Errorf("%s is bound cluster-wide", name)
	}
	var bound []string
	for _, o := range objs {
		if o.GetKind() == "RoleBinding" && o.GetName() == name {
			bound = append(bound, o.GetNamespace())
		}
	}
	if strings.Join(bound, ",") != namespaces {
		t.Errorf("%s: RoleBindings in %v, want %s", name, bound, namespaces)
	}
}
