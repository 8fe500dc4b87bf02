package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/fixtures"
)

// leaseKey is the leader election Lease of a default `claimwarden run` with
// --leader-election-namespace claimwarden-system.
var leaseKey = client.ObjectKey{Namespace: controllerNamespace, Name: "claimwarden.claimwarden.dev"}

// readyAt1Gi creates a 3-replica StatefulSet on the simulator's class, waits
// for its Pods and for the controller to report the untouched claims Ready,
// so that the template bump that follows is the only change, and returns the
// Pods' UIDs.
func readyAt1Gi(t *testing.T, cl *cluster, ns string, procs ...*controller) (*appsv1.StatefulSet, map[string]types.UID) {
	t.Helper()
	sts := fixtures.StatefulSet(ns, "web", 3, class, "1Gi")
	uids := createReady(t, cl.admin, sts)
	waitRolloutDone(t, cl.admin, client.ObjectKeyFromObject(sts), 3, "1Gi", procs...)
	if n := len(mustPatchEvents(t, cl.admin, ns)); n != 0 {
		t.Fatalf("%d %s events before any template change", n, patchedReason)
	}
	return sts, uids
}

// bump changes the claim template from 1Gi to 2Gi the way users must today.
func bump(t *testing.T, cl *cluster, sts *appsv1.StatefulSet) {
	t.Helper()
	if err := fixtures.ReplaceTemplates(context.Background(), cl.admin, client.ObjectKeyFromObject(sts), fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
}

func mustPatchEvents(t *testing.T, c client.Client, ns string) []string {
	t.Helper()
	evs, err := patchEvents(context.Background(), c, ns)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Note)
	}
	return out
}

// TestRolloutAsServiceAccount is the whole product path through the binary,
// with only the permissions of config/rbac: a template bump on a 3-replica
// StatefulSet brings every claim to 2Gi, highest ordinal first and one at a
// time, reports it in the VolumeClaimRollout, and leaves the Pods running.
// A permission config/rbac lacks fails it, either by a rollout that never
// finishes or by a "forbidden" line in the controller's log.
func TestRolloutAsServiceAccount(t *testing.T) {
	cl := started(t)
	ns := namespace(t, cl.admin)
	ctl := startController(t, cl, "controller")
	sts, uids := readyAt1Gi(t, cl, ns, ctl)
	key := client.ObjectKeyFromObject(sts)
	claims := claimNames("web", 3)

	began := time.Now()
	bump(t, cl, sts)
	vcr := waitRolloutDone(t, cl.admin, key, 3, "2Gi", ctl)
	t.Logf("rollout of 3 claims took %v (simulated resize %v each)", time.Since(began).Round(time.Millisecond), simDelay)

	if vcr.Status.Progress != "3/3" || vcr.Status.Counts.Total != 3 || vcr.Status.Counts.Capacity != "6Gi" {
		t.Errorf("VolumeClaimRollout: %s; want progress 3/3, total 3, capacity 6Gi", describe(vcr))
	}
	order := assertPatchedOnce(t, cl.admin, ns, "web", claims, "2Gi")
	if !slices.Equal(order, claims) {
		t.Errorf("claims patched in order %v, want %v (highest ordinal first)", order, claims)
	}
	// One at a time: each patch follows the previous claim's resize, which
	// the simulator finishes only after simDelay.
	evs, err := patchEvents(context.Background(), cl.admin, ns)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(evs); i++ {
		if gap := evs[i].EventTime.Sub(evs[i-1].EventTime.Time); gap < simDelay {
			t.Errorf("patch of %s came %v after that of %s, before its resize (%v) could finish", evs[i].Related.Name, gap, evs[i-1].Related.Name, simDelay)
		}
	}
	assertPodsKept(t, cl.admin, sts, uids)
}

// TestRolloutInSteps has the controller resize two claims at a time
// (--max-concurrent-patches 2): the three claims go in a step of two and a
// step of one, each step one ClaimPatched event, each claim one patch by the
// audit log, and no write to the StatefulSet, whose template is already
// the new one: the floor of API writes.
func TestRolloutInSteps(t *testing.T) {
	cl := started(t)
	ns := namespace(t, cl.admin)
	ctl := startController(t, cl, "controller", "--max-concurrent-patches", "2")
	sts, uids := readyAt1Gi(t, cl, ns, ctl)
	claims := claimNames("web", 3)

	bump(t, cl, sts)
	waitRolloutDone(t, cl.admin, client.ObjectKeyFromObject(sts), 3, "2Gi", ctl)

	order := assertPatchedOnce(t, cl.admin, ns, "web", claims, "2Gi")
	if len(order) == 3 && (!sameSet(order[:2], claims[:2]) || order[2] != claims[2]) {
		t.Errorf("claims patched in order %v, want %v together, then %s", order, claims[:2], claims[2])
	}
	evs, err := patchEvents(context.Background(), cl.admin, ns)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Related != nil || evs[1].Related == nil || evs[1].Related.Name != claims[2] {
		t.Errorf("%s events %v, want one for the step of %v (no related object) and one related to %s", patchedReason, mustPatchEvents(t, cl.admin, ns), claims[:2], claims[2])
	}
	// The template was replaced by hand (bump): nothing left to converge.
	if writes := claimwardenWrites(t, "statefulsets", ns); len(writes) != 0 {
		t.Errorf("claimwarden wrote the StatefulSet whose template a person had replaced: %s", describeWrites(writes))
	}
	assertPodsKept(t, cl.admin, sts, uids)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestKillMidRollout SIGKILLs the controller twice during a rollout, each
// time right after a claim was patched and while its storage still grows (so
// the dead process held the only knowledge that it was waiting for that
// claim), and starts a new process, which must first wait out the dead
// one's Lease. The rollout must finish with every claim patched exactly
// once: nothing in memory may be needed to avoid repeating a patch or to
// continue with the next claim.
func TestKillMidRollout(t *testing.T) {
	cl := started(t)
	ns := namespace(t, cl.admin)
	first := startController(t, cl, "controller-1")
	sts, uids := readyAt1Gi(t, cl, ns, first)
	key := client.ObjectKeyFromObject(sts)
	claims := claimNames("web", 3) // data-web-2, data-web-1, data-web-0

	bump(t, cl, sts)
	waitPatched(t, cl.admin, ns, claims[0], "2Gi", first)
	first.kill(t)
	assertResizing(t, cl.admin, ns, claims[0], "1Gi", "2Gi")
	if req := request(claim(t, cl.admin, ns, claims[1])); req != "1Gi" {
		t.Fatalf("%s already at %s when the first controller was killed", claims[1], req)
	}

	// The Lease of the killed process was not released: this one takes over
	// only when it expires, and must then continue with the next claim.
	killed := time.Now()
	second := startController(t, cl, "controller-2")
	waitPatched(t, cl.admin, ns, claims[1], "2Gi", second)
	t.Logf("after the first SIGKILL, the next patch came %v later (lease expiry)", time.Since(killed).Round(time.Millisecond))
	second.kill(t)
	assertResizing(t, cl.admin, ns, claims[1], "1Gi", "2Gi")
	if req := request(claim(t, cl.admin, ns, claims[2])); req != "1Gi" {
		t.Fatalf("%s already at %s when the second controller was killed", claims[2], req)
	}

	third := startController(t, cl, "controller-3")
	vcr := waitRolloutDone(t, cl.admin, key, 3, "2Gi", third)
	if vcr.Status.Progress != "3/3" {
		t.Errorf("VolumeClaimRollout: %s; want progress 3/3", describe(vcr))
	}
	order := assertPatchedOnce(t, cl.admin, ns, "web", claims, "2Gi")
	if !slices.Equal(order, claims) {
		t.Errorf("claims patched in order %v, want %v", order, claims)
	}
	// The third process patched only the last claim: it found the other two
	// done (or resizing) on the server and did not repeat them.
	if n := third.acceptedPatches(t); n != 1 {
		t.Errorf("the third controller sent %d accepted patches, want 1 (%s)", n, claims[2])
	}
	assertPodsKept(t, cl.admin, sts, uids)
}

// TestLeaderHandover runs two controllers, as a Deployment with two replicas
// would: only the Lease holder patches, and when it is stopped (SIGTERM, as
// in a rolling update) mid-rollout it releases the Lease, so the standby
// takes over at once instead of waiting out the lease, and finishes without
// repeating the patch the first one made.
func TestLeaderHandover(t *testing.T) {
	cl := started(t)
	ns := namespace(t, cl.admin)
	leader := startController(t, cl, "leader")
	// The first process gets the Lease (possibly after an earlier test's
	// killed process' lease expires); the standby starts only then, so which
	// one leads is known.
	var leaderID string
	waitFor(t, "the first controller to hold the Lease", []*controller{leader}, func(ctx context.Context) (bool, error) {
		// The log line comes after the Lease write, so the Lease read after
		// it names this process, not an earlier test's.
		if !leader.logContains("Successfully acquired lease") {
			return false, nil
		}
		var lease coordinationv1.Lease
		if err := cl.admin.Get(ctx, leaseKey, &lease); err != nil {
			return false, err
		}
		leaderID = ptr.Deref(lease.Spec.HolderIdentity, "")
		return leaderID != "", nil
	})
	standby := startController(t, cl, "standby")
	sts, uids := readyAt1Gi(t, cl, ns, leader, standby)
	claims := claimNames("web", 3)

	bump(t, cl, sts)
	waitPatched(t, cl.admin, ns, claims[0], "2Gi", leader, standby)
	if n := leader.acceptedPatches(t); n != 1 {
		t.Errorf("the leader sent %d accepted patches, want 1", n)
	}
	if n := standby.acceptedPatches(t); n != 0 {
		t.Errorf("the standby sent %d accepted patches without holding the Lease, want 0", n)
	}
	if standby.logContains("Successfully acquired lease") {
		t.Fatal("the standby logged acquiring the Lease while the leader held it")
	}

	leader.terminate(t, 30*time.Second)
	stopped := time.Now()
	var took time.Duration
	waitFor(t, "the standby to take the Lease", []*controller{standby}, func(ctx context.Context) (bool, error) {
		var lease coordinationv1.Lease
		if err := cl.admin.Get(ctx, leaseKey, &lease); err != nil {
			return false, err
		}
		holder := ptr.Deref(lease.Spec.HolderIdentity, "")
		took = time.Since(stopped)
		return holder != "" && holder != leaderID, nil
	})
	// The lease lasts 15 s and the leader renewed it at most 2 s before it
	// stopped, so a standby that had to wait for it to expire would take
	// over after ~13 s at the earliest; after a release it retries within
	// its 2 s retry period.
	t.Logf("the standby took the Lease %v after the leader exited", took.Round(time.Millisecond))
	if took > 10*time.Second {
		t.Errorf("the standby took the Lease %v after the leader stopped: the leader did not release it", took)
	}
	// The standby logs the acquisition just after writing the Lease: wait
	// for the line rather than read the log once (seen missing once).
	waitFor(t, "the standby to log acquiring the Lease", []*controller{standby}, func(context.Context) (bool, error) {
		return standby.logContains("Successfully acquired lease"), nil
	})

	waitRolloutDone(t, cl.admin, client.ObjectKeyFromObject(sts), 3, "2Gi", standby)
	assertPatchedOnce(t, cl.admin, ns, "web", claims, "2Gi")
	if n := standby.acceptedPatches(t); n != 2 {
		t.Errorf("the standby sent %d accepted patches after taking over, want 2 (%v)", n, claims[1:])
	}
	assertPodsKept(t, cl.admin, sts, uids)
}
