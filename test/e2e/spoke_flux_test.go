package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
	spokeEnv, spoke := startSpoke(t)

	// The tenant's credential: a service account of the spoke.
	const tenantNS, applier = "flux-remote", "applier"
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenantNS}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: tenantNS, Name: applier}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "flux-remote-applier"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: tenantNS, Name: applier}}},
	} {
		if err := spoke.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	tenantCfg, err := spokeEnv.ServiceAccountConfig(ctx, tenantNS, applier)
	if err != nil {
		t.Fatal(err)
	}
	tenantKubeconfig := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "spoke-kubeconfig-" + fmt.Sprint(time.Now().UnixNano())},
		Data: map[string][]byte{"value": kubeconfigOf(t, tenantCfg)}}
	// The operator's: the spoke's admin, listed as a Kubeconfig cluster.
	listed := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controllerNamespace, Name: "spoke-admin"},
		Data: map[string][]byte{"value": kubeconfigOf(t, spokeEnv.Config)}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: controllerNamespace, Name: "claimwarden-spoke-admin"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{listed.Name}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: controllerNamespace, Name: "claimwarden-spoke-admin"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: controllerNamespace, Name: serviceAccount}}}
	// claimwarden reads the tenant's kubeconfig as kustomize-controller
	// does, to know which cluster it names and who it authenticates as.
	tenantRole := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: tenantKubeconfig.Namespace, Name: "claimwarden-" + tenantKubeconfig.Name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{tenantKubeconfig.Name}}}}
	tenantBinding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: tenantKubeconfig.Namespace, Name: tenantRole.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: tenantRole.Name},
		Subjects: binding.Subjects}
	for _, o := range []client.Object{tenantKubeconfig, listed, role, binding, tenantRole, tenantBinding} {
		if err := cl.admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cl.admin.Delete(context.Background(), o) })
	}
	config := writeGiteaConfig(t, g.URL, giteaSecret(t, cl, g.Token, "gitea-token-spoke-flux"), nil)
	appendFile(t, config, fmt.Sprintf("clusters:\n- name: %s\n  type: Kubeconfig\n  secretRef: {name: %s}\n", spokeName, listed.Name))
	ctl := startController(t, cl, "flux-hub", "--flux", "--flux-artifact-cache-dir", t.TempDir(), "--config", config)

	const name = "spoke-flux"
	url, err := g.CreateRepo(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	s := &fluxScenario{t: t, cl: cl, g: g, ctl: ctl, repo: name, ns: namespace(t, cl.admin),
		ks: types.NamespacedName{Namespace: "flux-system", Name: name}}
	s.sts = types.NamespacedName{Namespace: s.ns, Name: "web"}
	if err := fixtures.Namespace(ctx, spoke, s.ns); err != nil {
		t.Fatal(err)
	}
	first := s.push("1Gi", "", "web at 1Gi")
	if err := cl.admin.Create(ctx, fluxenv.GitRepository(s.ks.Namespace, name, url, time.Minute)); err != nil {
		t.Fatal(err)
	}
	ks := fluxenv.Kustomization(s.ks.Namespace, name, name, "./")
	ks.Spec.TargetNamespace = s.ns
	ks.Spec.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: tenantKubeconfig.Name}}
	if err := cl.admin.Create(ctx, ks); err != nil {
		t.Fatal(err)
	}
	s.kustomization(first, "Ready, applied to the spoke", ready)
	waitRolloutDone(t, spoke, s.sts, 2, "1Gi", ctl)
	before := &appsv1.StatefulSet{}
	if err := spoke.Get(ctx, s.sts, before); err != nil {
		t.Fatal(err)
	}
	pods := podUIDs(t, spoke, before)

	sha := s.commit("2Gi", "", "web at 2Gi")
	s.kustomization(sha, "Ready after claimwarden converged the spoke's StatefulSet", ready)
	vcr := waitRolloutDone(t, spoke, s.sts, 2, "2Gi", ctl)
	if src := vcr.Status.Proposal.Source; src.Kind != "Kustomization" || src.Name != name {
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
