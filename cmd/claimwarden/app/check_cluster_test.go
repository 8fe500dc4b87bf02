package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/cmd/claimwarden/app/check"
	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// impersonatingKubeconfig writes a kubeconfig that acts as user through
// the admin credentials of env (its ConfigFor).
func impersonatingKubeconfig(t *testing.T, env *testenv.Env, user string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), user+".kubeconfig")
	if err := testenv.WriteKubeconfig(path, env.ConfigFor(user)); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckAgainstCluster runs check with --kubeconfig against a real API
// server, as a user who may only read StatefulSets, claims, StorageClasses
// and Namespaces: the verdicts are those of the base-manifest run, and
// nothing in the cluster changes.
func TestCheckAgainstCluster(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	ctx := context.Background()
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	create := func(obj client.Object) {
		t.Helper()
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}

	// The cluster holds what testdata/check/grow/base describes: two
	// StatefulSets of two replicas, their claims Bound at 10Gi.
	create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"tier": "prod"}}})
	objs, err := manifests.Read([]string{"testdata/check/grow/base"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sets, _, err := manifests.StatefulSets(objs)
	if err != nil {
		t.Fatal(err)
	}
	expand := true
	create(&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: "csi.example.com", AllowVolumeExpansion: &expand})
	for _, s := range sets {
		create(s.StatefulSet)
		for o := range *s.Spec.Replicas {
			tmpl := s.Spec.VolumeClaimTemplates[0]
			pvc := &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: diff.ClaimName(tmpl.Name, s.Name, o), Labels: map[string]string{"app": s.Name}},
				Spec:       tmpl.Spec,
			}
			create(pvc)
			// Bound with its capacity, through the status subresource, as a provisioner leaves it.
			pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: tmpl.Spec.AccessModes,
				Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}
			if err := c.Status().Update(ctx, pvc); err != nil {
				t.Fatal(err)
			}
		}
	}

	// The checker may get and list what check reads, and nothing else.
	const user = "ci-checker"
	create(&rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "claimwarden-check"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims", "namespaces", "resourcequotas"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"get", "list"}},
		},
	})
	create(&rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "claimwarden-check"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "claimwarden-check"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})
	readOnly, err := client.New(env.ConfigFor(user), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	probe := &appsv1.StatefulSet{}
	if err := readOnly.Get(ctx, types.NamespacedName{Namespace: "shop", Name: "big"}, probe); err != nil {
		t.Fatalf("the checker cannot read: %v", err)
	}
	if err := readOnly.Update(ctx, probe); !apierrors.IsForbidden(err) {
		t.Fatalf("the checker may write (update = %v): the test would not show that check writes nothing", err)
	}
	before := resourceVersions(t, c)

	kubeconfig := impersonatingKubeconfig(t, env, user)
	code, out := runCheckCLI(t, nil, "-f", "testdata/check/grow/pr", "--kubeconfig", kubeconfig)
	if code != exitDenied {
		t.Fatalf("exit code %d, want %d:\n%s", code, exitDenied, out)
	}
	golden(t, "cluster-table", strings.ReplaceAll(out, kubeconfig, "checker.kubeconfig"))

	// The same verdicts in JSON, compared with the live cluster.
	var stdout strings.Builder
	code = execute(ctx, []string{"check", "-f", "testdata/check/grow/pr", "--kubeconfig", kubeconfig, "-o", "json"}, nil, &stdout, &strings.Builder{})
	var report check.Report
	if err := json.Unmarshal([]byte(stdout.String()), &report); err != nil || code != exitDenied {
		t.Fatalf("exit %d, report %v:\n%s", code, err, stdout.String())
	}
	if report.Mode != check.ModeCluster || report.Summary.Allowed != 2 || report.Summary.Denied != 2 || len(report.Warnings) != 0 {
		t.Errorf("report %+v, want mode cluster, 2 claims allowed, 2 denied, no warnings", report.Summary)
	}

	if after := resourceVersions(t, c); !equalMaps(before, after) {
		t.Errorf("check changed the cluster:\nbefore %v\nafter  %v", before, after)
	}

	// --live reads the cluster of the kubeconfig kubectl would use
	// ($KUBECONFIG). A proposal that lost big's namespace is refused, where
	// it was a new default/big; given the namespace the tool applies, the
	// change is checked.
	t.Setenv("KUBECONFIG", kubeconfig)
	big, err := os.ReadFile("testdata/check/grow/pr/big.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dropped := files(t, map[string]string{"big.yaml": strings.Replace(string(big), "  namespace: shop\n", "", 1)})
	code, out = runCheckCLI(t, nil, "-f", dropped, "--live")
	if want := "StatefulSet big moves from namespace shop to namespace default: the cluster has shop/big, the proposal default/big instead (" +
		filepath.Join(dropped, "big.yaml") + ":1, which names no namespace and so gets --namespace default). If the GitOps tool applies it into one namespace, give --namespace shop"; code != exitCheckInput || !strings.Contains(out, want) {
		t.Errorf("exit code %d, want %d and %q:\n%s", code, exitCheckInput, want, out)
	}
	code, out = runCheckCLI(t, nil, "-f", dropped, "--live", "-n", "shop")
	if want := "max-step: claim data-big-0 (StatefulSet shop/big)"; code != exitDenied || !strings.Contains(out, want) {
		t.Errorf("exit code %d, want %d and %q:\n%s", code, exitDenied, want, out)
	}
	// Who may list StatefulSets only in the proposal's namespaces gets the
	// check, and a warning that a move cannot be seen.
	const scoped = "ci-checker-scoped"
	create(&rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: scoped + "-cluster"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"list"}},
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}},
		},
	})
	create(&rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: scoped},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: scoped + "-cluster"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: scoped}},
	})
	create(&rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: scoped},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims", "resourcequotas"}, Verbs: []string{"list"}},
			{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"list"}},
		},
	})
	create(&rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: scoped},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: scoped},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: scoped}},
	})
	code, out = runCheckCLI(t, nil, "-f", dropped, "--kubeconfig", impersonatingKubeconfig(t, env, scoped))
	if want := "cannot list StatefulSets in every namespace (grant list on statefulsets cluster-wide)"; code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "new default/big") {
		t.Errorf("exit code %d, want 0, default/big new and %q:\n%s", code, want, out)
	}

	// Without the right to read Namespaces, check still runs and says what policies miss.
	const narrow = "ci-checker-narrow"
	create(&rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: narrow},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"list"}},
			{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"list"}},
			{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"list"}},
		},
	})
	create(&rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: narrow},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: narrow},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: narrow}},
	})
	code, out = runCheckCLI(t, nil, "-f", "testdata/check/grow/pr", "--kubeconfig", impersonatingKubeconfig(t, env, narrow))
	if code != exitDenied || !strings.Contains(out, "cannot read Namespace shop (grant get on namespaces)") ||
		!strings.Contains(out, "cannot list ResourceQuotas in namespace shop (grant list on resourcequotas)") {
		t.Errorf("exit code %d, want %d and warnings about the Namespace and the quotas:\n%s", code, exitDenied, out)
	}

	// A user who may not list claims gets exit 2 and the API server's refusal.
	code, out = runCheckCLI(t, nil, "-f", "testdata/check/grow/pr", "--kubeconfig", impersonatingKubeconfig(t, env, "nobody"))
	if code != exitCheckInput || !strings.Contains(out, `listing StorageClasses: storageclasses.storage.k8s.io is forbidden: User "nobody" cannot list resource "storageclasses"`) {
		t.Errorf("exit code %d, want %d naming the forbidden list:\n%s", code, exitCheckInput, out)
	}

	// A quota too small for either increase: quota-fits denies both, each
	// decided with its own claims and the other's, as the controller's would. No kube-controller-manager runs here, so the quota
	// has no status.used and check counts the four 10Gi claims, as it would.
	create(&corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "storage"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsStorage: resource.MustParse("44Gi")}},
	})
	code, out = runCheckCLI(t, nil, "-f", "testdata/check/grow/pr", "--kubeconfig", impersonatingKubeconfig(t, env, user))
	for _, want := range []string{
		"quota-fits: claim data-small-0 (StatefulSet shop/small): 10Gi → 15Gi with the other claims of the proposal (2 in all) needs 10Gi more requests.storage besides 60Gi more for other proposals in flight, and ResourceQuota storage has 40Gi used of 44Gi: 66Gi over",
		"quota-fits: claim data-big-1 (StatefulSet shop/big): 10Gi → 40Gi with the other claims of the proposal (2 in all) needs 60Gi more requests.storage besides 10Gi more for other proposals in flight, and ResourceQuota storage has 40Gi used of 44Gi: 66Gi over",
	} {
		if code != exitDenied || !strings.Contains(out, want) {
			t.Errorf("exit code %d, want %d and %q:\n%s", code, exitDenied, want, out)
		}
	}
}

// resourceVersions maps every object check reads to its resourceVersion.
func resourceVersions(t *testing.T, c client.Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	lists := map[string]client.ObjectList{
		"statefulset": &appsv1.StatefulSetList{}, "pvc": &corev1.PersistentVolumeClaimList{},
		"storageclass": &storagev1.StorageClassList{}, "namespace": &corev1.NamespaceList{},
	}
	for kind, l := range lists {
		if err := c.List(context.Background(), l); err != nil {
			t.Fatal(err)
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range items {
			o, err := meta.Accessor(item)
			if err != nil {
				t.Fatal(err)
			}
			out[kind+" "+o.GetNamespace()+"/"+o.GetName()] = o.GetResourceVersion()
		}
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
