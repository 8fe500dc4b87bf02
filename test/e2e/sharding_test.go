package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/claimwarden/claimwarden/reconciler/source"
	"github.com/claimwarden/claimwarden/test/fluxenv"
)

// TestTenancySharding: two claimwarden instances on one hub split the
// tool objects as the two Flux instances do (sharding.fluxcd.io/key): the
// shard converges the tenant's Kustomization only, the instance without
// a key the platform's only, and says so of a Kustomization no instance
// handles. With the shard stopped, the other goes on and still leaves the
// tenant's StatefulSet alone.
func TestTenancySharding(t *testing.T) {
	cl := started(t)
	startFlux(t)
	startTenantFlux(t)
	g := startGitea(t)
	l := newTenancy(t, cl.admin)
	shard := startController(t, cl, "shard", append(tenantFluxFlags, "--flux-artifact-cache-dir", t.TempDir(), "--sharding-key", tenantShard)...)
	main := startController(t, cl, "main", "--flux", "--flux-artifact-cache-dir", t.TempDir(), "--sharding-shards", tenantShard)

	tenant := setupTenantKustomization(t, cl, g, shard, l, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"})
	platform, _ := setupFluxScenario(t, cl, g, main, "sharding-platform")

	sha := platform.commit("2Gi", "", "the platform's web at 2Gi")
	platform.kustomization(sha, "Ready after the instance without a key converged it", ready)
	waitRolloutDone(t, cl.admin, platform.sts, 2, "2Gi", main)
	sha = tenant.pushFiles(map[string]string{"web.yaml": statefulSetManifest(t, l.tenantA, "web", "2Gi")}, "the tenant's web at 2Gi")
	tenant.kustomization(sha, "Ready after the shard converged it", ready)
	waitRolloutDone(t, cl.admin, tenant.web, 2, "2Gi", shard)
	for _, c := range []struct {
		ctl       *controller
		mine, not string
	}{{shard, tenant.ns, platform.ns}, {main, platform.ns, tenant.ns}} {
		if !converged(t, c.ctl, c.mine) || converged(t, c.ctl, c.not) {
			t.Errorf("%s converged the StatefulSets of %s %v and of %s %v, want only the first", c.ctl.Name(), c.mine, converged(t, c.ctl, c.mine), c.not, converged(t, c.ctl, c.not))
		}
	}

	// A Kustomization of a shard no instance serves: said on it, by the
	// instance without a key.
	orphan := fluxenv.Kustomization(l.tenantB, "orphan", "orphan", "./")
	orphan.Labels = map[string]string{fluxenv.ShardLabel: "nobody"}
	if err := cl.admin.Create(context.Background(), orphan); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeObject(t, cl, orphan) })
	waitToolEvent(t, cl.admin, main, "Kustomization", l.tenantB, "orphan", source.ReasonNoShard, `shard "nobody"`)

	// The shard stops: the tenant's next bump waits for it, and the other
	// instance goes on with its own.
	shard.terminate(t, 15*time.Second)
	tenant.ctl = main // the waits watch the processes that run
	sha = tenant.pushFiles(map[string]string{"web.yaml": statefulSetManifest(t, l.tenantA, "web", "3Gi")}, "the tenant's web at 3Gi, its shard stopped")
	tenant.kustomization(sha, "failing on the claim templates", failing(sha))
	sha = platform.commit("3Gi", "", "the platform's web at 3Gi")
	platform.kustomization(sha, "Ready after the instance without a key converged it", ready)
	waitRolloutDone(t, cl.admin, platform.sts, 2, "3Gi", main)
	live := &appsv1.StatefulSet{}
	if err := cl.admin.Get(context.Background(), tenant.web, live); err != nil {
		t.Fatal(err)
	}
	size := live.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]
	if got := size.String(); got != "2Gi" || converged(t, main, tenant.ns) {
		t.Errorf("the tenant's StatefulSet is at %s (converged by %s: %v) while its shard is stopped, want 2Gi, untouched", got, main.Name(), converged(t, main, tenant.ns))
	}
}

// converged reports whether ctl's log says it converged a StatefulSet of
// namespace ns.
func converged(t *testing.T, ctl *controller, ns string) bool {
	t.Helper()
	data, err := os.ReadFile(ctl.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "converged the StatefulSet to the proposal") && strings.Contains(line, `"namespace":"`+ns+`"`) {
			return true
		}
	}
	return false
}
