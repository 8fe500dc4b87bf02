package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/converge"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// helmCLIChart is the chart a CI job installs with the Helm CLI: the
// HelmRelease scenario's StatefulSet, at a chart version of its own.
const helmCLIChart = `apiVersion: v2
name: web
version: %s
appVersion: "1.0.0"
`

// helmCLI runs the Helm CLI of the test environment against the cluster as
// an administrator, in namespace ns.
type helmCLI struct {
	t     *testing.T
	ns    string
	chart string
}

// writeChart writes the chart at version with the claim size.
func (h *helmCLI) writeChart(version, size string) {
	h.t.Helper()
	for name, data := range map[string]string{
		"Chart.yaml":                 fmt.Sprintf(helmCLIChart, version),
		"values.yaml":                fmt.Sprintf(helmValuesFile, size),
		"templates/statefulset.yaml": helmStatefulSetTemplate,
	} {
		path := filepath.Join(h.chart, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			h.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			h.t.Fatal(err)
		}
	}
}

// run runs helm with args and returns its combined output and error.
func (h *helmCLI) run(args ...string) (string, error) {
	h.t.Helper()
	bin, err := testenv.BinDir()
	if err != nil {
		h.t.Fatal(err)
	}
	args = append(args, "--kubeconfig", env.Kubeconfig, "--namespace", h.ns)
	out, err := exec.Command(filepath.Join(bin, "helm"), args...).CombinedOutput()
	return string(out), err
}

// Plain Helm, no GitOps tool (helm.enabled), with the real Helm CLI: a CI
// job's `helm upgrade` of a chart that grows the claims 1Gi → 2Gi fails on
// the immutable volumeClaimTemplates; claimwarden reads the failed release
// record as its ServiceAccount (config/components/helm-cli bound in the
// release namespace), converges the StatefulSet with its Pods kept and says
// on the record to upgrade again; the same `helm upgrade` then succeeds.
func TestHelmCLIUpgrade(t *testing.T) {
	cl := started(t)
	ctx := context.Background()
	ns := namespace(t, cl.admin)
	if err := cl.admin.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "claimwarden-helm-cli"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "claimwarden-helm-cli"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: controllerNamespace}},
	}); err != nil {
		t.Fatal(err)
	}
	// With every component installed, Secrets are listable in the
	// release namespace bound above, and nowhere else.
	checkAccess(t, cl.admin, saUser, []access{
		{"list", "", "secrets", "", ns, true},
		{"watch", "", "secrets", "", ns, true},
		{"list", "", "secrets", "", "any-namespace", false},
		{"list", "", "secrets", "", "", false},
	})
	ctl := startController(t, cl, "helm-cli", "--helm", "--helm-namespaces", ns)
	h := &helmCLI{t: t, ns: ns, chart: t.TempDir()}
	key := types.NamespacedName{Namespace: ns, Name: "web"}

	h.writeChart("0.1.0", "1Gi")
	if out, err := h.run("install", "web", h.chart); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	waitRolloutDone(t, cl.admin, key, 2, "1Gi", ctl)
	before := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, key, before); err != nil {
		t.Fatal(err)
	}
	pods := podUIDs(t, cl.admin, before)

	h.writeChart("0.2.0", "2Gi")
	out, err := h.run("upgrade", "web", h.chart)
	if err == nil || !converge.IsTemplatesImmutableMessage(out) {
		t.Fatalf("the first helm upgrade: %v\n%s\nwant it refused on the claim templates", err, out)
	}
	vcr := waitRolloutDone(t, cl.admin, key, 2, "2Gi", ctl)
	if src := vcr.Status.Proposal.Source; src.Kind != "Secret" || src.Name != "sh.helm.release.v1.web.v2" || src.Chart != "web@0.2.0" || src.Revision != "" {
		t.Errorf("rollout source %+v, want the failed record sh.helm.release.v1.web.v2, chart web@0.2.0, no commit", src)
	}
	assertPatchedOnce(t, cl.admin, ns, "web", claimNames("web", 2), "2Gi")
	assertConvergedOnce(t, ns, "web")
	waitFor(t, "the failed release record asking for the next helm upgrade", []*controller{ctl}, func(ctx context.Context) (bool, error) {
		var list eventsv1.EventList
		if err := cl.admin.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.Regarding.Kind == "Secret" && e.Regarding.Name == "sh.helm.release.v1.web.v2" && e.Reason == "ClaimwardenUpgradeAgain" {
				return true, nil
			}
		}
		return false, nil
	})

	after := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, key, after); err != nil {
		t.Fatal(err)
	}
	if after.UID == before.UID {
		t.Error("the StatefulSet was not converged (same UID)")
	}
	if a := after.Annotations; a["meta.helm.sh/release-name"] != "web" || a["meta.helm.sh/release-namespace"] != ns {
		t.Errorf("the re-created StatefulSet lost Helm's ownership annotations: %v", a)
	}
	if out, err := h.run("upgrade", "web", h.chart); err != nil {
		t.Fatalf("the next helm upgrade, after the convergence: %v\n%s", err, out)
	}
	status, err := h.run("status", "web", "-o", "json")
	if err != nil || !strings.Contains(status, `"status":"deployed"`) || !strings.Contains(status, `"version":3`) {
		t.Errorf("helm status after the upgrade: %v\n%.400s\nwant version 3 deployed", err, status)
	}
	if err := cl.admin.Get(ctx, key, after); err != nil {
		t.Fatal(err)
	}
	assertPodsKept(t, cl.admin, after, pods)
	if n := ctl.counter(t, `claimwarden_convergences_total{cluster="in-cluster",result="converged",source="Secret"}`); n != 1 {
		t.Errorf("claimwarden_convergences_total for release records = %d, want this one", n)
	}
}
