package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/source"
	"github.com/claimwarden/claimwarden/test/fluxenv"
	"github.com/claimwarden/claimwarden/test/gitea"
)

// deployer is the ServiceAccount of tenant A its Kustomization applies as.
const deployer = "deployer"

// tenantKustomization is tenant A's repository, GitRepository and
// Kustomization (spec.serviceAccountName deployer), all in its namespace,
// reconciled by startTenantFlux's controllers; the repository holds the
// tenant's StatefulSet web.
type tenantKustomization struct {
	*fluxScenario
	web types.NamespacedName
}

// setupTenantKustomization creates the deployer ServiceAccount of tenant A
// bound to role in its namespace, and the repository with web at 1Gi, and
// waits until Flux applied it and claimwarden's rollout is Ready.
func setupTenantKustomization(t *testing.T, cl *cluster, g *gitea.Server, ctl *controller, l tenancy, role rbacv1.RoleRef) *tenantKustomization {
	t.Helper()
	ctx := context.Background()
	if err := cl.admin.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: l.tenantA, Name: deployer}}); err != nil {
		t.Fatal(err)
	}
	bind(t, cl.admin, l.tenantA, deployer, role, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: deployer, Namespace: l.tenantA})
	name := strings.TrimPrefix(l.tenantA, "tenant-a-")
	url, err := g.CreateRepo(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	s := &tenantKustomization{
		fluxScenario: &fluxScenario{t: t, cl: cl, g: g, ctl: ctl, repo: name, ns: l.tenantA, ks: types.NamespacedName{Namespace: l.tenantA, Name: name}},
		web:          types.NamespacedName{Namespace: l.tenantA, Name: "web"},
	}
	s.sts = s.web
	first, err := g.PushCommit(ctx, name, map[string]string{"web.yaml": statefulSetManifest(t, l.tenantA, "web", "1Gi"), "kustomization.yaml": tenantKustomizationFile("web.yaml")}, "web at 1Gi")
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.admin.Create(ctx, inShard(fluxenv.GitRepository(l.tenantA, name, url, time.Minute))); err != nil {
		t.Fatal(err)
	}
	ks := fluxenv.Kustomization(l.tenantA, name, name, "./")
	ks.Spec.ServiceAccountName = deployer
	if err := cl.admin.Create(ctx, inShard(ks)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeObject(t, cl, ks) })
	s.kustomization(first, "Ready", ready)
	waitRolloutDone(t, cl.admin, s.web, 2, "1Gi", ctl)
	return s
}

// tenantKustomizationFile is a kustomization.yaml of resources.
func tenantKustomizationFile(resources ...string) string {
	return "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- " + strings.Join(resources, "\n- ") + "\n"
}

// pushFiles pushes files as the tenant would, and makes Flux fetch them at once.
func (s *tenantKustomization) pushFiles(files map[string]string, message string) string {
	s.t.Helper()
	sha, err := s.g.PushCommit(context.Background(), s.repo, files, message)
	if err != nil {
		s.t.Fatal(err)
	}
	repo := fluxenv.GitRepository(s.ks.Namespace, s.ks.Name, "", 0)
	if _, err := fluxenv.RequestReconcile(context.Background(), s.cl.admin, repo); err != nil {
		s.t.Fatal(err)
	}
	return sha
}

// failing is a Kustomization whose attempt at sha failed (not merely in
// progress) and was not applied.
func failing(sha string) func(*kustomizev1.Kustomization) bool {
	return func(ks *kustomizev1.Kustomization) bool {
		ok, reason, _ := fluxenv.Ready(ks)
		return !ok && reason != meta.ProgressingReason && ks.Status.LastAppliedRevision != "main@sha1:"+sha
	}
}

// Tenant A's Kustomization, locked down as Flux's multi-tenancy guide says
// (its own ServiceAccount, admin of its namespace only; no cross-namespace
// references), gets a commit that grows its own StatefulSet's claims and
// adds the platform's StatefulSet (and tenant B's) of the same name with
// bigger claims. Flux refuses those as the tenant's ServiceAccount;
// claimwarden leaves them alone and says so on the Kustomization, writes
// nothing in the platform's or tenant B's namespace, and converges the
// tenant's own StatefulSet.
func TestTenancyFluxKustomization(t *testing.T) {
	cl := started(t)
	ctx := context.Background()
	startTenantFlux(t)
	g := startGitea(t)
	l := newTenancy(t, cl.admin)
	ctl := startController(t, cl, "flux", append(tenantFluxFlags, "--flux-artifact-cache-dir", t.TempDir())...)
	// The platform's own Flux applied its StatefulSet; tenant B's, its.
	l.createVictims(t, cl, ctl, func(sts *appsv1.StatefulSet) {
		sts.Labels["kustomize.toolkit.fluxcd.io/name"] = "apps"
		sts.Labels["kustomize.toolkit.fluxcd.io/namespace"] = sts.Namespace
	})
	s := setupTenantKustomization(t, cl, g, ctl, l, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"})
	w := watch(t, cl.admin, l.platform, l.tenantB)
	before := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, s.web, before); err != nil {
		t.Fatal(err)
	}
	pods := podUIDs(t, cl.admin, before)

	web2Gi := statefulSetManifest(t, l.tenantA, "web", "2Gi")
	sha := s.pushFiles(map[string]string{
		"web.yaml":           web2Gi,
		"db.yaml":            victimManifest(t, l.platform, "2Gi") + "---\n" + victimManifest(t, l.tenantB, "2Gi"),
		"kustomization.yaml": tenantKustomizationFile("web.yaml", "db.yaml"),
	}, "web at 2Gi, and the platform's db")
	ks := s.kustomization(sha, "failing", failing(sha))
	_, reason, msg := fluxenv.Ready(ks)
	t.Logf("Flux on the commit: %s: %s", reason, msg)
	waitToolEvent(t, cl.admin, ctl, "Kustomization", l.tenantA, s.ks.Name, source.ReasonNotManaged,
		"StatefulSet "+l.platform+"/"+victim, "StatefulSet "+l.tenantB+"/"+victim, "not in the inventory")

	// The tenant's own StatefulSet converges although Flux cannot apply the commit.
	vcr := waitRolloutDone(t, cl.admin, s.web, 2, "2Gi", ctl)
	if src := vcr.Status.Proposal.Source; src.Kind != "Kustomization" || src.Namespace != l.tenantA || !strings.HasSuffix(src.Revision, sha) {
		t.Errorf("rollout source %+v, want the tenant's Kustomization at %s", src, sha)
	}
	if a := vcr.Status.Proposal.Authority; a == nil || a.User != "system:serviceaccount:"+l.tenantA+":"+deployer {
		t.Errorf("rollout authority %+v, want the tenant's ServiceAccount %s", a, deployer)
	}
	assertPatchedOnce(t, cl.admin, l.tenantA, "web", claimNames("web", 2), "2Gi")
	after := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, s.web, after); err != nil {
		t.Fatal(err)
	}
	if after.UID == before.UID {
		t.Error("the tenant's StatefulSet was not converged (same UID)")
	}
	assertPodsKept(t, cl.admin, after, pods)
	// Flux still cannot apply the platform's StatefulSet as the tenant.
	ks = s.kustomization(sha, "still failing after claimwarden's nudge", func(ks *kustomizev1.Kustomization) bool {
		_, _, msg := fluxenv.Ready(ks)
		return failing(sha)(ks) && strings.Contains(msg, l.platform)
	})
	_, reason, msg = fluxenv.Ready(ks)
	t.Logf("Flux after the convergence: %s: %s", reason, msg)
	w.assertClean(t)

	// Without the platform's StatefulSet the tenant's commit applies.
	back := s.pushFiles(map[string]string{"web.yaml": web2Gi, "kustomization.yaml": tenantKustomizationFile("web.yaml")}, "web at 2Gi only")
	s.kustomization(back, "Ready", func(ks *kustomizev1.Kustomization) bool {
		return ready(ks) && ks.Status.LastAppliedRevision == "main@sha1:"+back
	})
	if err := cl.admin.Get(ctx, s.web, after); err != nil {
		t.Fatal(err)
	}
	assertPodsKept(t, cl.admin, after, pods)
	w.assertClean(t)
}

// Tenant A's ServiceAccount may re-create its StatefulSets but not patch
// its claims: the rollout of its commit stalls NotAuthorized before the
// first write, and nothing is written, in its namespace either.
func TestTenancyFluxWithoutClaimPatch(t *testing.T) {
	cl := started(t)
	startTenantFlux(t)
	g := startGitea(t)
	l := newTenancy(t, cl.admin)
	ctl := startController(t, cl, "flux", append(tenantFluxFlags, "--flux-artifact-cache-dir", t.TempDir())...)
	if err := cl.admin.Create(context.Background(), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: l.tenantA, Name: "no-claim-patch"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"*"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch"}},
	}}); err != nil {
		t.Fatal(err)
	}
	s := setupTenantKustomization(t, cl, g, ctl, l, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "no-claim-patch"})
	w := watch(t, cl.admin, l.tenantA)
	before := &appsv1.StatefulSet{}
	if err := cl.admin.Get(context.Background(), s.web, before); err != nil {
		t.Fatal(err)
	}
	pods := podUIDs(t, cl.admin, before)

	sha := s.pushFiles(map[string]string{"web.yaml": statefulSetManifest(t, l.tenantA, "web", "2Gi")}, "web at 2Gi")
	ks := s.kustomization(sha, "failing on the claim templates", failing(sha))
	_, reason, msg := fluxenv.Ready(ks)
	t.Logf("Flux on the commit: %s: %s", reason, msg)
	refusal := "not authorised: system:serviceaccount:" + l.tenantA + ":" + deployer + " may not patch persistentvolumeclaims " + l.tenantA + "/data-web-"
	waitFor(t, "the rollout stalled "+v1alpha1.ReasonNotAuthorized, []*controller{ctl}, func(ctx context.Context) (bool, error) {
		vcr := &v1alpha1.VolumeClaimRollout{}
		if err := cl.admin.Get(ctx, s.web, vcr); err != nil {
			return false, err
		}
		d := describe(vcr)
		return strings.Contains(d, v1alpha1.ReasonNotAuthorized) && strings.Contains(d, refusal) && strings.Contains(d, "nothing was written"), nil
	})
	waitToolEvent(t, cl.admin, ctl, "StatefulSet", l.tenantA, "web", v1alpha1.ReasonNotAuthorized, refusal)
	w.assertClean(t)
	assertPodsKept(t, cl.admin, before, pods)
}
