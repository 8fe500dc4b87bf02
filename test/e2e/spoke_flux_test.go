package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/fluxenv"
	"github.com/claimwarden/claimwarden/test/gitea"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// kubeconfigOf is cfg as the bytes of a kubeconfig file.
func kubeconfigOf(t *testing.T, cfg *rest.Config) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := testenv.WriteKubeconfig(path, cfg); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestHubAndSpokeFlux: a Kustomization on the hub applies to a spoke
// through its tenant's kubeconfig (a service account of the spoke, no
// impersonation); claimwarden, which lists the spoke with the operator's
// own credential, converges the bump there as whoever that kubeconfig
// is, and Flux is Ready again with success on the commit.
func TestHubAndSpokeFlux(t *testing.T) {
	cl := started(t)
	ctx := context.Background()
	startFlux(t)
	g := startGitea(t)
	spokeEnv, spoke, _ := startSpoke(t)

	// The tenant's credential: a service account of the spoke, allowed
	// everything.
	const tenantNS, applier = "flux-remote", "applier"
	if err := spoke.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenantNS}}); err != nil {
		t.Fatal(err)
	}
	tenantKubeconfig := spokeAccount(t, cl, spokeEnv, spoke, tenantNS, applier, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}, "", "flux-system")
	// A HelmRelease's, in its own namespace (the release's, on both clusters).
	helmNS := spokeNamespace(t, "spoke-helm")
	for _, c := range []client.Client{cl.admin, spoke} {
		if err := fixtures.Namespace(ctx, c, helmNS); err != nil {
			t.Fatal(err)
		}
	}
	helmKubeconfig := spokeAccount(t, cl, spokeEnv, spoke, tenantNS, "helm-applier", rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}, "", helmNS)
	// Another tenant's: an account that may re-create its StatefulSets
	// but not patch their claims. Made before the controller starts, so
	// that its RBAC outlives the controller at the end.
	const limited = "limited"
	limitedKubeconfig := spokeAccount(t, cl, spokeEnv, spoke, tenantNS, limited, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "no-claim-patch"}, "spoke-flux-limited", "flux-system")
	// The operator's: the spoke's admin, listed as a Kubeconfig cluster.
	listed := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controllerNamespace, Name: "spoke-admin"},
		Data: map[string][]byte{"value": kubeconfigOf(t, spokeEnv.Config)}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: controllerNamespace, Name: "claimwarden-spoke-admin"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{listed.Name}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: controllerNamespace, Name: "claimwarden-spoke-admin"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: controllerNamespace, Name: serviceAccount}}}
	for _, o := range []client.Object{listed, role, binding} {
		if err := cl.admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cl.admin.Delete(context.Background(), o) })
	}
	config := writeGiteaConfig(t, g.URL, giteaSecret(t, cl, g.Token, "gitea-token-spoke-flux"), nil)
	appendFile(t, config, fmt.Sprintf("clusters:\n- name: %s\n  type: Kubeconfig\n  secretRef: {name: %s}\n", spokeName, listed.Name))
	ctl := startController(t, cl, "flux-hub", "--flux", "--flux-helm-releases", "--flux-artifact-cache-dir", t.TempDir(), "--config", config)

	s := spokeKustomization(t, cl, g, ctl, spoke, "spoke-flux", tenantKubeconfig)
	before := &appsv1.StatefulSet{}
	if err := spoke.Get(ctx, s.sts, before); err != nil {
		t.Fatal(err)
	}
	pods := podUIDs(t, spoke, before)

	sha := s.commit("2Gi", "", "web at 2Gi")
	s.kustomization(sha, "Ready after claimwarden converged the spoke's StatefulSet", ready)
	vcr := waitRolloutDone(t, spoke, s.sts, 2, "2Gi", ctl)
	if src := vcr.Status.Proposal.Source; src.Kind != "Kustomization" || src.Name != s.ks.Name {
		t.Errorf("the spoke's rollout source %+v, want the Kustomization %s", src, s.ks)
	}
	if a := vcr.Status.Proposal.Authority; a == nil || a.User != "system:serviceaccount:"+tenantNS+":"+applier {
		t.Errorf("the spoke's rollout was authorised as %+v, want the tenant kubeconfig's account %s/%s", a, tenantNS, applier)
	}
	for _, claimName := range claimNames("web", 2) {
		if pvc := claim(t, spoke, s.ns, claimName); request(pvc) != "2Gi" || capacity(pvc) != "2Gi" {
			t.Errorf("spoke claim %s: request %s capacity %s, want 2Gi", claimName, request(pvc), capacity(pvc))
		}
	}
	after := &appsv1.StatefulSet{}
	if err := spoke.Get(ctx, s.sts, after); err != nil {
		t.Fatal(err)
	}
	assertPodsKept(t, spoke, after, pods)
	waitStatus(t, g, s.repo, sha, "claimwarden/"+spokeName+"/"+s.ns+"/web", "success", "2/2 claims compatible", ctl)
	if err := cl.admin.Get(ctx, s.sts, &v1alpha1.VolumeClaimRollout{}); !apierrors.IsNotFound(err) {
		t.Errorf("a VolumeClaimRollout %s on the hub (%v); it belongs on the spoke", s.sts, err)
	}

	// A HelmRelease releasing to the spoke: its record is there.
	h := spokeHelmRelease(t, cl, g, ctl, spoke, helmNS, helmKubeconfig)
	before = &appsv1.StatefulSet{}
	if err := spoke.Get(ctx, h.sts, before); err != nil {
		t.Fatal(err)
	}
	pods = podUIDs(t, spoke, before)
	sha = h.commit("2Gi", "1.0.0", "web at 2Gi, released to the spoke")
	h.release(sha, "deployed after claimwarden converged the spoke's StatefulSet", deployed)
	waitRolloutDone(t, spoke, h.sts, 2, "2Gi", ctl)
	after = &appsv1.StatefulSet{}
	if err := spoke.Get(ctx, h.sts, after); err != nil {
		t.Fatal(err)
	}
	assertPodsKept(t, spoke, after, pods)

	// A tenant whose account on the spoke may re-create its StatefulSets
	// but not patch their claims: its commit stalls NotAuthorized on the
	// spoke before the first write, and nothing is written there.
	l := spokeKustomization(t, cl, g, ctl, spoke, "spoke-flux-limited", limitedKubeconfig)
	before = &appsv1.StatefulSet{}
	if err := spoke.Get(ctx, l.sts, before); err != nil {
		t.Fatal(err)
	}
	sha = l.commit("2Gi", "", "web at 2Gi, by a tenant who may not patch claims")
	refusal := "not authorised: system:serviceaccount:" + tenantNS + ":" + limited + " may not patch persistentvolumeclaims " + l.ns + "/data-web-"
	waitFor(t, "the spoke's rollout stalled "+v1alpha1.ReasonNotAuthorized, []*controller{ctl}, func(ctx context.Context) (bool, error) {
		vcr := &v1alpha1.VolumeClaimRollout{}
		if err := spoke.Get(ctx, l.sts, vcr); err != nil {
			return false, err
		}
		d := describe(vcr)
		return strings.Contains(d, v1alpha1.ReasonNotAuthorized) && strings.Contains(d, refusal) && strings.Contains(d, "nothing was written"), fmt.Errorf("%s", d)
	})
	l.kustomization(sha, "still failing on the claim templates", failing(sha))
	after = &appsv1.StatefulSet{}
	if err := spoke.Get(ctx, l.sts, after); err != nil {
		t.Fatal(err)
	}
	if after.UID != before.UID {
		t.Error("the limited tenant's StatefulSet was re-created on the spoke")
	}
	for _, claimName := range claimNames("web", 2) {
		if pvc := claim(t, spoke, l.ns, claimName); request(pvc) != "1Gi" {
			t.Errorf("spoke claim %s of the limited tenant: request %s, want 1Gi untouched", claimName, request(pvc))
		}
	}
}

// spokeAccount makes service account name of the spoke's namespace ns,
// bound to role (a ClusterRole for every namespace, a Role in the
// scenario namespace of test repo when set: made there, allowing
// StatefulSets and reading claims), and returns the name of the
// Secret of secretNS on the hub holding its kubeconfig, which
// claimwarden may read as Flux does.
func spokeAccount(t *testing.T, cl *cluster, spokeEnv *testenv.Env, spoke client.Client, ns, name string, role rbacv1.RoleRef, repo, secretNS string) string {
	t.Helper()
	ctx := context.Background()
	objs := []client.Object{&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}
	if role.Kind == "Role" {
		where := spokeNamespace(t, repo)
		if err := fixtures.Namespace(ctx, spoke, where); err != nil {
			t.Fatal(err)
		}
		objs = append(objs,
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: where, Name: role.Name}, Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"*"}},
				{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch"}},
			}},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: where, Name: name}, RoleRef: role, Subjects: subject})
	} else {
		objs = append(objs, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name}, RoleRef: role, Subjects: subject})
	}
	for _, o := range objs {
		if err := spoke.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := spokeEnv.ServiceAccountConfig(ctx, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNS, Name: "spoke-" + name + "-" + fmt.Sprint(time.Now().UnixNano())},
		Data: map[string][]byte{"value": kubeconfigOf(t, cfg)}}
	role2 := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: secret.Namespace, Name: "claimwarden-" + secret.Name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{secret.Name}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: secret.Namespace, Name: role2.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role2.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: controllerNamespace, Name: serviceAccount}}}
	for _, o := range []client.Object{secret, role2, binding} {
		if err := cl.admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cl.admin.Delete(context.Background(), o) })
	}
	return secret.Name
}

// spokeNamespace is the namespace of test repo's scenario: its name, on
// both clusters (namespace makes the hub's).
func spokeNamespace(t *testing.T, repo string) string {
	return strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())) + "-" + repo
}

// spokeKustomization creates repository name holding the StatefulSet at
// 1Gi, its GitRepository and a Kustomization applying it to the spoke
// through the kubeconfig in Secret flux-system/kubeconfig, and waits
// until Flux applied it and the spoke's rollout is at rest.
func spokeKustomization(t *testing.T, cl *cluster, g *gitea.Server, ctl *controller, spoke client.Client, name, kubeconfig string) *fluxScenario {
	t.Helper()
	ctx := context.Background()
	url, err := g.CreateRepo(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	ns := spokeNamespace(t, name)
	for _, c := range []client.Client{cl.admin, spoke} {
		if err := fixtures.Namespace(ctx, c, ns); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	s := &fluxScenario{t: t, cl: cl, g: g, ctl: ctl, repo: name, ns: ns, ks: types.NamespacedName{Namespace: "flux-system", Name: name}}
	s.sts = types.NamespacedName{Namespace: ns, Name: "web"}
	first := s.push("1Gi", "", "web at 1Gi")
	if err := cl.admin.Create(ctx, fluxenv.GitRepository(s.ks.Namespace, name, url, time.Minute)); err != nil {
		t.Fatal(err)
	}
	ks := fluxenv.Kustomization(s.ks.Namespace, name, name, "./")
	ks.Spec.TargetNamespace = ns
	ks.Spec.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: kubeconfig}}
	if err := cl.admin.Create(ctx, ks); err != nil {
		t.Fatal(err)
	}
	// Gone before its kubeconfig Secret and the spoke (cleanups run last
	// first), and before the next test's controllers look.
	t.Cleanup(func() { removeObject(t, cl, ks) })
	s.kustomization(first, "Ready, applied to the spoke", ready)
	waitRolloutDone(t, spoke, s.sts, 2, "1Gi", ctl)
	return s
}

// appendFile appends text to the file at path.
func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// spokeHelmRelease creates repository spoke-helm holding the chart at
// 1Gi, its GitRepository and a HelmRelease in ns releasing it to the
// spoke through the kubeconfig in Secret ns/kubeconfig, and waits until
// helm-controller installed it there and the spoke's rollout is at rest.
func spokeHelmRelease(t *testing.T, cl *cluster, g *gitea.Server, ctl *controller, spoke client.Client, ns, kubeconfig string) *helmScenario {
	t.Helper()
	ctx := context.Background()
	const name = "spoke-helm"
	url, err := g.CreateRepo(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	s := &helmScenario{t: t, cl: cl, g: g, ctl: ctl, repo: name, extra: map[string]string{},
		hr: types.NamespacedName{Namespace: ns, Name: name}, sts: types.NamespacedName{Namespace: ns, Name: "web"}}
	s.first = s.push("1Gi", "1.0.0", "web at 1Gi")
	if err := cl.admin.Create(ctx, fluxenv.GitRepository(ns, name, url, time.Minute)); err != nil {
		t.Fatal(err)
	}
	hr := fluxenv.HelmRelease(ns, name, name, "./chart")
	hr.Spec.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: kubeconfig}}
	if err := cl.admin.Create(ctx, hr); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeObject(t, cl, hr) })
	s.release(s.first, "installed on the spoke", deployed)
	waitRolloutDone(t, spoke, s.sts, 2, "1Gi", ctl)
	return s
}
