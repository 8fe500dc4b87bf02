package e2e

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// patchedReason is the reason of the event the controller emits for each
// claim it patched, regarding the StatefulSet and related to the claim.
const patchedReason = "ClaimPatched"

// namespace creates a namespace named after the test.
func namespace(t *testing.T, c client.Client) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 60 {
		name = name[:60]
	}
	if err := fixtures.Namespace(context.Background(), c, name); err != nil {
		t.Fatal(err)
	}
	return name
}

// claimNames are the claims of fixtures.StatefulSet's "data" template,
// highest ordinal first: the order claimwarden patches them in.
func claimNames(sts string, replicas int) []string {
	var out []string
	for i := replicas - 1; i >= 0; i-- {
		out = append(out, fmt.Sprintf("data-%s-%d", sts, i))
	}
	return out
}

// createReady creates sts, waits until its Pods are ready, and returns their UIDs by name.
func createReady(t *testing.T, c client.Client, sts *appsv1.StatefulSet) map[string]types.UID {
	t.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, sts); err != nil {
		t.Fatal(err)
	}
	if err := fixtures.WaitReady(ctx, c, client.ObjectKeyFromObject(sts), timeout); err != nil {
		t.Fatal(err)
	}
	return podUIDs(t, c, sts)
}

func podUIDs(t *testing.T, c client.Client, sts *appsv1.StatefulSet) map[string]types.UID {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(sts.Namespace), client.MatchingLabels(sts.Spec.Selector.MatchLabels)); err != nil {
		t.Fatal(err)
	}
	out := map[string]types.UID{}
	for _, p := range pods.Items {
		out[p.Name] = p.UID
	}
	return out
}

// assertPodsKept fails unless the same Pods (by UID) run as before: the
// rollout must never restart a Pod, and the StatefulSet's re-creation by
// ReplaceTemplates must have re-adopted them.
func assertPodsKept(t *testing.T, c client.Client, sts *appsv1.StatefulSet, before map[string]types.UID) {
	t.Helper()
	after := podUIDs(t, c, sts)
	if len(after) != len(before) {
		t.Errorf("Pods %v after the rollout, %v before", after, before)
	}
	for name, uid := range before {
		if after[name] != uid {
			t.Errorf("Pod %s: UID %s after the rollout, %s before: it was re-created", name, after[name], uid)
		}
	}
}

// waitFor polls cond until it holds; each round also checks that none of
// procs died, so a crashed controller fails the test at once with its log.
func waitFor(t *testing.T, what string, procs []*controller, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), fixtures.Poll, timeout, true, func(ctx context.Context) (bool, error) {
		for _, p := range procs {
			if err := p.Exited(); err != nil {
				return false, err
			}
		}
		ok, err := cond(ctx)
		if ctx.Err() == nil || last == nil {
			// A call cut by the deadline would hide what the waits saw before.
			last = err
		}
		return ok, nil // API errors are retried until the deadline
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}

// waitRolloutDone waits for the VolumeClaimRollout to be Ready with every
// claim compatible at size, and returns it.
func waitRolloutDone(t *testing.T, c client.Client, key client.ObjectKey, replicas int32, size string, procs ...*controller) *v1alpha1.VolumeClaimRollout {
	t.Helper()
	vcr := &v1alpha1.VolumeClaimRollout{}
	waitFor(t, "VolumeClaimRollout "+key.String()+" Ready at "+size, procs, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, vcr); err != nil {
			return false, err
		}
		if !conditions.IsReady(vcr) || vcr.Status.Counts.Compatible != replicas || len(vcr.Status.Claims) != int(replicas) {
			return false, fmt.Errorf("status: %s", describe(vcr))
		}
		for _, cl := range vcr.Status.Claims {
			if cl.To != size {
				return false, fmt.Errorf("status: %s", describe(vcr))
			}
		}
		return true, nil
	})
	return vcr
}

func describe(v *v1alpha1.VolumeClaimRollout) string {
	var b strings.Builder
	fmt.Fprintf(&b, "progress=%s counts=%+v", v.Status.Progress, v.Status.Counts)
	for _, c := range v.Status.Conditions {
		fmt.Fprintf(&b, "; %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	for _, c := range v.Status.Claims {
		fmt.Fprintf(&b, "; claim %s %s→%s %s", c.Name, c.From, c.To, c.Phase)
	}
	return b.String()
}

func claim(t *testing.T, c client.Client, ns, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pvc); err != nil {
		t.Fatal(err)
	}
	return pvc
}

func request(pvc *corev1.PersistentVolumeClaim) string {
	q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	return q.String()
}

func capacity(pvc *corev1.PersistentVolumeClaim) string {
	q := pvc.Status.Capacity[corev1.ResourceStorage]
	return q.String()
}

// patchEvents returns the ClaimPatched events (events.k8s.io) of ns, oldest first.
func patchEvents(ctx context.Context, c client.Client, ns string) ([]eventsv1.Event, error) {
	var list eventsv1.EventList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Reason == patchedReason {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].EventTime.Before(&out[j].EventTime) })
	return out, nil
}

// waitPatched waits until the claim's request is size AND its ClaimPatched
// event is stored: the controller then has nothing left to do for that claim
// but wait for the storage, which takes simDelay. A process stopped in that
// window is stopped between two patches, deterministically.
//
// (Stopping it right after the apply but before the event is written, a
// window of milliseconds, cannot be hit deterministically from outside; the
// event would be lost there, events being best effort.)
func waitPatched(t *testing.T, c client.Client, ns, pvcName, size string, procs ...*controller) {
	t.Helper()
	waitFor(t, "claim "+pvcName+" patched to "+size, procs, func(ctx context.Context) (bool, error) {
		pvc := &corev1.PersistentVolumeClaim{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: pvcName}, pvc); err != nil {
			return false, err
		}
		if request(pvc) != size {
			return false, nil
		}
		evs, err := patchEvents(ctx, c, ns)
		if err != nil {
			return false, err
		}
		for _, e := range evs {
			if e.Related != nil && e.Related.Name == pvcName {
				return true, nil
			}
		}
		return false, fmt.Errorf("%s has request %s but no %s event yet", pvcName, size, patchedReason)
	})
}

// assertResizing fails the test unless the claim is patched but its storage
// has not grown yet: proof that the controller was stopped mid-rollout, while
// it waited for this claim, and before it could patch the next one.
func assertResizing(t *testing.T, c client.Client, ns, name, from, to string) {
	t.Helper()
	pvc := claim(t, c, ns, name)
	if request(pvc) != to || capacity(pvc) != from {
		t.Fatalf("%s: request %s, capacity %s at the kill; want %s and %s (the simulator's %v resize must still run; is the machine that slow?)",
			name, request(pvc), capacity(pvc), to, from, simDelay)
	}
}

// assertPatchedOnce checks the evidence, on the server, that each claim was
// patched exactly once by claimwarden:
//   - exactly one write to the claim by a claimwarden process in the API
//     server's audit log (claimwardenWrites): a patch repeated by the same
//     process, or by one restarted after a kill, is a second line there
//     whatever the events say;
//   - a managedFields entry of field manager "claimwarden" (operation Apply)
//     owning spec.resources.requests.storage: the write that is counted is
//     the server-side apply that holds the field;
//   - request and capacity at size;
//   - exactly one ClaimPatched event regarding the StatefulSet names it (as
//     related object for a step of one claim, in the note for a step of
//     several), and none is a series (the same event repeated).
//
// It returns the claims in the order the API server answered their patches.
func assertPatchedOnce(t *testing.T, c client.Client, ns, sts string, claims []string, size string) []string {
	t.Helper()
	writes := claimwardenWrites(t, "persistentvolumeclaims", ns)
	perClaim := map[string]int{}
	var order []string
	for _, w := range writes {
		perClaim[w.ObjectRef.Name]++
		order = append(order, w.ObjectRef.Name)
	}
	evs, err := patchEvents(context.Background(), c, ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Regarding.Kind != "StatefulSet" || e.Regarding.Name != sts {
			t.Errorf("%s event %s regards %s %s, want StatefulSet %s", patchedReason, e.Name, e.Regarding.Kind, e.Regarding.Name, sts)
		}
		if e.Series != nil && e.Series.Count != 1 {
			t.Errorf("%s event %q is a series of %d: a step was patched %d times", patchedReason, e.Note, e.Series.Count, e.Series.Count)
		}
	}
	for _, name := range claims {
		if n := perClaim[name]; n != 1 {
			t.Errorf("%s: %d writes by claimwarden in the audit log, want exactly 1 (0: a lost patch; more: a repeated one): %s", name, n, describeWrites(writes))
		}
		if n := len(eventsNaming(evs, name)); n != 1 {
			t.Errorf("%s: named by %d %s events, want exactly 1", name, n, patchedReason)
		}
		pvc := claim(t, c, ns, name)
		if request(pvc) != size || capacity(pvc) != size {
			t.Errorf("%s: request %s capacity %s, want %s", name, request(pvc), capacity(pvc), size)
		}
		if !appliedByClaimwarden(pvc) {
			t.Errorf("%s: no managedFields entry of manager claimwarden (Apply) owning spec.resources.requests.storage; managers: %s", name, managers(pvc))
		}
	}
	if len(perClaim) != len(claims) {
		t.Errorf("claimwarden wrote the claims %v, want exactly %v", perClaim, claims)
	}
	return order
}

// eventsNaming returns the events among evs that name the claim: as their
// related object, or as a whole word of a step's note.
func eventsNaming(evs []eventsv1.Event, claim string) []eventsv1.Event {
	word := regexp.MustCompile(`\b` + regexp.QuoteMeta(claim) + `\b`)
	var out []eventsv1.Event
	for _, e := range evs {
		if (e.Related != nil && e.Related.Name == claim) || (e.Related == nil && word.MatchString(e.Note)) {
			out = append(out, e)
		}
	}
	return out
}

func appliedByClaimwarden(pvc *corev1.PersistentVolumeClaim) bool {
	for _, m := range pvc.ManagedFields {
		if m.Manager == "claimwarden" && m.Operation == "Apply" && m.FieldsV1 != nil &&
			strings.Contains(m.FieldsV1.GetRawString(), `"f:requests":{"f:storage":{}}`) {
			return true
		}
	}
	return false
}

func managers(pvc *corev1.PersistentVolumeClaim) string {
	var out []string
	for _, m := range pvc.ManagedFields {
		raw := ""
		if m.FieldsV1 != nil {
			raw = m.FieldsV1.GetRawString()
		}
		out = append(out, fmt.Sprintf("%s/%s %s", m.Manager, m.Operation, raw))
	}
	return strings.Join(out, "; ")
}
