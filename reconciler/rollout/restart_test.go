package rollout_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/storagesim"
)

// optIn lets claimwarden restart the StatefulSet's Pods for offline expansion.
func optIn(sts *appsv1.StatefulSet) {
	if sts.Annotations == nil {
		sts.Annotations = map[string]string{}
	}
	sts.Annotations[v1alpha1.RestartForExpansionAnnotation] = "true"
}

func waitingForRestart(v *v1alpha1.VolumeClaimRollout, claim string) bool {
	for _, c := range v.Status.Claims {
		if c.Name == claim {
			return c.Phase == v1alpha1.ClaimWaitingForRestart
		}
	}
	return false
}

func claimStatus(v *v1alpha1.VolumeClaimRollout, name string) v1alpha1.ClaimStatus {
	for _, c := range v.Status.Claims {
		if c.Name == name {
			return c
		}
	}
	return v1alpha1.ClaimStatus{}
}

// By default claimwarden restarts nothing: a claim whose file system waits
// for a remount is WaitingForRestart (not Resizing), the rollout is
// Ready=False WaitingForRestart (not in progress, not stalled), the next
// claim waits, no Pod is touched; a person restarting the Pod finishes it.
func TestOfflineExpansionIsReportedAndWaitsByDefault(t *testing.T) {
	c := started(t)
	ctx := context.Background()
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "db", 2, classExpandable, "1Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	offlineClaims(t, c, ns, "data-db-0", "data-db-1")
	uids := podUIDs(t, c, ns)

	if err := fixtures.ReplaceTemplates(ctx, c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "WaitingForRestart", func(v *v1alpha1.VolumeClaimRollout) bool {
		return waitingForRestart(v, "data-db-1") && strings.HasPrefix(condition(v, meta.ReadyCondition), v1alpha1.ReasonWaitingForRestart)
	})
	cl := claimStatus(vcr, "data-db-1")
	for _, want := range []string{"waiting for its Pod (ordinal 1) to restart", "FileSystemResizePending", v1alpha1.RestartForExpansionAnnotation} {
		if !strings.Contains(cl.Message, want) {
			t.Errorf("data-db-1: %q, want it to say %q", cl.Message, want)
		}
	}
	if vcr.Status.Counts.WaitingForRestart != 1 || vcr.Status.Counts.Updating != 0 {
		t.Errorf("counts %+v, want 1 waiting for a restart and none updating", vcr.Status.Counts)
	}
	if conditions.IsReconciling(vcr) || conditions.IsStalled(vcr) {
		t.Errorf("%s: waiting for a restart nobody makes is neither in progress nor stalled", describe(vcr))
	}
	if msg := condition(vcr, meta.ReadyCondition); !strings.Contains(msg, "data-db-1 wait for their Pods to restart") {
		t.Errorf("Ready: %s, want the waiting claim named", msg)
	}
	if p := claimStatus(vcr, "data-db-0").Phase; p != v1alpha1.ClaimPending {
		t.Errorf("data-db-0 is %s, want Pending behind data-db-1", p)
	}
	unchangedFor(t, c, ns, uids, 3*simDelay)
	if r := request(claim(t, c, ns, "data-db-0")); r.String() != "1Gi" {
		t.Errorf("data-db-0 patched to %s while data-db-1 waits for its Pod", r.String())
	}
	if n := evictions(ns); len(n) != 0 {
		t.Errorf("evictions %v, want none without the opt-in", n)
	}

	// A person restarts the Pod: its file system grows, the next claim follows.
	if err := c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-1"}}); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, c, key, "data-db-0 waiting for its restart", func(v *v1alpha1.VolumeClaimRollout) bool {
		return waitingForRestart(v, "data-db-0") && claimStatus(v, "data-db-1").Phase == v1alpha1.ClaimCompatible
	})
}

// Opted in, claimwarden restarts the Pods whose claims need it, one at a
// time, highest ordinal first, through the Eviction API: a
// PodDisruptionBudget allowing no disruption makes it wait (429) and retry;
// once it allows one, each Pod is evicted only after the previous one is
// back and Ready and its claim compatible. Pods whose claims grow online
// keep running.
func TestRestartsForExpansionOneAtATimeThroughEvictions(t *testing.T) {
	c := started(t)
	ctx := context.Background()
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "db", 3, classExpandable, "1Gi")
	optIn(sts)
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	// Ordinal 0's volume grows online: its Pod must never restart.
	offlineClaims(t, c, ns, "data-db-1", "data-db-2")
	uids := podUIDs(t, c, ns)
	pdb := disruptionBudget(t, c, ns, "db", 3) // no disruption allowed
	pods := watchPods(t, ns, "db", 3)

	if err := fixtures.ReplaceTemplates(ctx, c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "refused by the PodDisruptionBudget", func(v *v1alpha1.VolumeClaimRollout) bool {
		return waitingForRestart(v, "data-db-2") && strings.Contains(claimStatus(v, "data-db-2").Message, "refused for now") && evictions(ns)["429"] > 0
	})
	if msg := claimStatus(vcr, "data-db-2").Message; !strings.Contains(msg, "disruption budget") {
		t.Errorf("data-db-2: %q, want the API server's reason (the disruption budget)", msg)
	}
	if r := vcr.Status.Restart; r == nil || r.Pod != "db-2" || r.UID != string(uids["db-2"]) || r.Ordinal != 2 {
		t.Errorf("status.restart %+v, want db-2 (UID %s) recorded before its eviction", r, uids["db-2"])
	}
	if !conditions.IsReconciling(vcr) || !strings.HasPrefix(condition(vcr, meta.ReconcilingCondition), v1alpha1.ReasonWaitingForRestart) {
		t.Errorf("%s: want Reconciling WaitingForRestart while claimwarden retries", describe(vcr))
	}
	unchangedFor(t, c, ns, uids, 2*time.Second)

	// One disruption at a time.
	pdb.Spec.MinAvailable = nil
	pdb.Spec.MaxUnavailable = ptrTo(intstr.FromInt32(1))
	if err := c.Update(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	vcr = waitRollout(t, c, key, "Ready after the restarts", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Compatible == 3
	})
	if vcr.Status.Restart != nil {
		t.Errorf("status.restart %+v left after the rollout", vcr.Status.Restart)
	}
	maxDown, downs := pods.result(t)
	if maxDown != 1 {
		t.Errorf("at most %d Pods were down at once, want exactly 1", maxDown)
	}
	if want := []string{"db-2", "db-1"}; !slices.Equal(downs, want) {
		t.Errorf("Pods went down in the order %v, want %v (highest ordinal first, never db-0)", downs, want)
	}
	after := podUIDs(t, c, ns)
	if after["db-0"] != uids["db-0"] {
		t.Errorf("db-0 re-created although its claim grew online")
	}
	for _, p := range []string{"db-1", "db-2"} {
		if after[p] == uids[p] {
			t.Errorf("%s kept UID %s: never restarted", p, uids[p])
		}
	}
	if got := evictions(ns); got["ok"] != 2 || got["error"] != 0 {
		t.Errorf("evictions %v, want exactly 2 accepted", got)
	}
	evs := waitEvents(t, c, ns, v1alpha1.ReasonPodEvicted, 2)
	if len(evs) != 2 || !strings.Contains(evs[0].Note, "Pod db-2") || !strings.Contains(evs[1].Note, "Pod db-1") {
		t.Errorf("PodEvicted events %v, want db-2 then db-1", notes(evs))
	}
	for _, name := range []string{"data-db-0", "data-db-1", "data-db-2"} {
		if got := capacity(claim(t, c, ns, name)); got.String() != "2Gi" {
			t.Errorf("%s capacity %s, want 2Gi", name, got.String())
		}
	}
}

// A restart policy can refuse restarts: the claim waits, says why, an event
// tells, no Pod is evicted; once the policy allows it, the restart happens.
func TestRestartRefusedByPolicy(t *testing.T) {
	c := started(t)
	ctx := context.Background()
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "db", 1, classExpandable, "1Gi")
	optIn(sts)
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	offlineClaims(t, c, ns, "data-db-0")
	uids := podUIDs(t, c, ns)
	allow := writePolicy(t, "no_restarts_"+strings.ReplaceAll(ns, "-", "_")+".rego", fmt.Sprintf(`package claimwarden.claims

deny contains {"policy": "no-restarts", "msg": sprintf("%%s: no Pod restarts in business hours (Pod %%s)", [claim_ref, input.change.pod])} if {
	input.change.restart == true
	input.change.namespace == %q
}
`, ns))

	if err := fixtures.ReplaceTemplates(ctx, c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "restart refused", func(v *v1alpha1.VolumeClaimRollout) bool {
		return waitingForRestart(v, "data-db-0") && strings.Contains(claimStatus(v, "data-db-0").Message, "refused by policy")
	})
	msg := claimStatus(vcr, "data-db-0").Message
	for _, want := range []string{"restart of Pod db-0 refused by policy", "no-restarts", "no Pod restarts in business hours (Pod db-0)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("data-db-0: %q, want %q", msg, want)
		}
	}
	if !strings.HasPrefix(condition(vcr, meta.ReadyCondition), v1alpha1.ReasonWaitingForRestart) || conditions.IsReconciling(vcr) {
		t.Errorf("%s: want Ready=False WaitingForRestart, not in progress", describe(vcr))
	}
	if vcr.Status.Restart != nil {
		t.Errorf("status.restart %+v recorded for a refused restart", vcr.Status.Restart)
	}
	refused := waitEvents(t, c, ns, v1alpha1.ReasonRestartRefused, 1)
	if !strings.Contains(refused[0].Note, "no-restarts") {
		t.Errorf("RestartRefused: %q, want the denial", refused[0].Note)
	}
	unchangedFor(t, c, ns, uids, 2*time.Second)
	if n := evictions(ns); len(n) != 0 {
		t.Errorf("evictions %v despite the refusal", n)
	}

	allow()
	waitRollout(t, c, key, "Ready once restarts are allowed", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Compatible == 1
	})
	if after := podUIDs(t, c, ns); after["db-0"] == uids["db-0"] {
		t.Error("db-0 was never restarted")
	}
}

// A record claimwarden did not write, naming a Pod whose claims wait for
// nothing, evicts nothing: it is dropped.
func TestForeignRestartRecordEvictsNothing(t *testing.T) {
	c := started(t)
	ctx := context.Background()
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "db", 1, classExpandable, "1Gi")
	optIn(sts)
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	uids := podUIDs(t, c, ns)

	vcr := &v1alpha1.VolumeClaimRollout{}
	if err := c.Get(ctx, key, vcr); err != nil {
		t.Fatal(err)
	}
	base := vcr.DeepCopy()
	vcr.Status.Restart = &v1alpha1.PodRestart{Pod: "db-0", UID: string(uids["db-0"]), Ordinal: 0, Since: metav1.Now()}
	if err := c.Status().Patch(ctx, vcr, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	// Any change of the StatefulSet reconciles it; the controller watches
	// no status writes, so it is touched until the record is dropped (the
	// cache may see the touch before the record).
	touches := 0
	waitRollout(t, c, key, "the foreign record dropped", func(v *v1alpha1.VolumeClaimRollout) bool {
		if v.Status.Restart == nil {
			return true
		}
		touches++
		patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"labels":{"touched":"%d"}}}`, touches)))
		if err := c.Patch(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}, patch); err != nil {
			t.Error(err)
		}
		return false
	})
	unchangedFor(t, c, ns, uids, time.Second)
	if n := evictions(ns); len(n) != 0 {
		t.Errorf("evictions %v on a foreign record", n)
	}
}

// A Pod restarted for its claim whose file system still does not grow (a
// driver that does not resize on mount) is not restarted again: the claim
// keeps waiting and says so, and the record stays, so no other Pod goes.
func TestRestartedPodIsNotRestartedAgain(t *testing.T) {
	c := started(t)
	ctx := context.Background()
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "db", 1, classExpandable, "1Gi")
	optIn(sts)
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	offlineClaimsAs(t, c, ns, storagesim.OfflineResizeNever, "data-db-0")
	before := podUIDs(t, c, ns)

	if err := fixtures.ReplaceTemplates(ctx, c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	vcr := waitRollout(t, c, key, "restarted once, still waiting", func(v *v1alpha1.VolumeClaimRollout) bool {
		return waitingForRestart(v, "data-db-0") && strings.Contains(claimStatus(v, "data-db-0").Message, "does not restart it again")
	})
	after := podUIDs(t, c, ns)
	if after["db-0"] == before["db-0"] {
		t.Fatalf("db-0 kept UID %s: never restarted", before["db-0"])
	}
	if r := vcr.Status.Restart; r == nil || r.UID != string(before["db-0"]) {
		t.Errorf("status.restart %+v, want the restart of db-0 (UID %s) kept", r, before["db-0"])
	}
	if conditions.IsReconciling(vcr) || !strings.HasPrefix(condition(vcr, meta.ReadyCondition), v1alpha1.ReasonWaitingForRestart) {
		t.Errorf("%s: want Ready=False WaitingForRestart for a person to decide", describe(vcr))
	}
	unchangedFor(t, c, ns, after, 3*time.Second)
	if got := evictions(ns); got["ok"] != 1 {
		t.Errorf("evictions %v, want exactly one", got)
	}
}
