package rollout_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// status.autoresize, written through the rollout's writer, and the
// rollout's own status share one object without undoing each other: the
// autoresize write leaves the rollout's fields as they were, the rollout's
// writes of a whole rollout leave status.autoresize, which stays under
// its own field manager. A status that says the same is not written again;
// a StatefulSet without a VolumeClaimRollout gets none. On the real
// control plane, with the controller running.
func TestWriterSharesTheStatusWithTheRollout(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	ctx := context.Background()
	sts := fixtures.StatefulSet(ns, "ledger", 1, classExpandable, "1Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	w := rollout.NewWriter(c, c)

	before := waitRollout(t, c, key, "Ready", readyTrue)
	st := v1alpha1.AutoresizeStatus{Usage: "85% data-ledger-0", PullRequest: "https://git.example.com/shop/pulls/1", State: "open",
		Proposed: "data 1Gi → 2Gi", Commit: "c0ffee", Message: "pull request https://git.example.com/shop/pulls/1 proposes data 1Gi → 2Gi",
		LastChecked: metav1.NewTime(time.Now().Truncate(time.Second))}
	if wrote, err := w.RecordAutoresize(ctx, key, st); err != nil || !wrote {
		t.Fatalf("recording status.autoresize: wrote %t, %v", wrote, err)
	}
	after := &v1alpha1.VolumeClaimRollout{}
	if err := c.Get(ctx, key, after); err != nil {
		t.Fatal(err)
	}
	if !sameAutoresize(after.Status.Autoresize, st) {
		t.Errorf("status.autoresize %+v, want %+v", after.Status.Autoresize, st)
	}
	if after.Status.Proposal == nil || after.Status.Progress != before.Status.Progress || len(after.Status.Claims) != 1 || !readyTrue(after) {
		t.Errorf("the rollout's status after the autoresize write: %s", describe(after))
	}
	if m := statusManagers(after); !slices.Contains(m, rollout.AutoresizeFieldOwner) || !slices.Contains(m, v1alpha1.ControllerName) {
		t.Errorf("status managed by %v, want %s and %s", m, rollout.AutoresizeFieldOwner, v1alpha1.ControllerName)
	}
	again := st
	again.LastChecked = metav1.NewTime(st.LastChecked.Add(time.Minute))
	if wrote, err := w.RecordAutoresize(ctx, key, again); err != nil || wrote {
		t.Errorf("recording what the status says already: wrote %t, %v; want no write", wrote, err)
	}

	// The rollout writes its status at each step of a resize.
	if err := fixtures.ReplaceTemplates(ctx, c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	resized := waitRollout(t, c, key, "Ready at 2Gi", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && len(v.Status.Claims) == 1 && v.Status.Claims[0].To == "2Gi"
	})
	if !sameAutoresize(resized.Status.Autoresize, st) {
		t.Errorf("status.autoresize after the rollout's writes %+v, want %+v", resized.Status.Autoresize, st)
	}

	other := client.ObjectKey{Namespace: ns, Name: "none"}
	if wrote, err := w.RecordAutoresize(ctx, other, st); err != nil || wrote {
		t.Errorf("a StatefulSet without a VolumeClaimRollout: wrote %t, %v; want nothing", wrote, err)
	}
	if err := c.Get(ctx, other, &v1alpha1.VolumeClaimRollout{}); !apierrors.IsNotFound(err) {
		t.Errorf("a StatefulSet without a VolumeClaimRollout: got %v, want none created", err)
	}
}

// A field status.autoresize no longer has is removed even when the writer
// reads a cache that is behind: the patch made on the stale copy is
// refused as a conflict and made again on the API server's. Left, the
// removed field would never compare equal and every check would write.
func TestWriterRemovesFieldsWhenTheCacheIsBehind(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	ctx := context.Background()
	key := client.ObjectKey{Namespace: ns, Name: "web"}
	if err := c.Create(ctx, &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}}); err != nil {
		t.Fatal(err)
	}
	stale := &v1alpha1.VolumeClaimRollout{}
	if err := c.Get(ctx, key, stale); err != nil {
		t.Fatal(err)
	}
	open := v1alpha1.AutoresizeStatus{PullRequest: "https://git.example.com/shop/pulls/1", State: "open",
		Proposed: "data 1Gi → 2Gi", Commit: "c0ffee", Message: "proposed", LastChecked: metav1.NewTime(time.Now().Truncate(time.Second))}
	if _, err := rollout.NewWriter(c, c).RecordAutoresize(ctx, key, open); err != nil {
		t.Fatal(err)
	}

	skipped := v1alpha1.AutoresizeStatus{Message: "not among the repositoryPrefixes", LastChecked: open.LastChecked}
	behind := &behindCache{Client: c, stale: stale}
	if wrote, err := rollout.NewWriter(behind, c).RecordAutoresize(ctx, key, skipped); err != nil || !wrote {
		t.Fatalf("recording on a stale cache: wrote %t, %v", wrote, err)
	}
	if behind.served != 1 {
		t.Fatalf("the stale copy was served %d times, want once", behind.served)
	}
	got := &v1alpha1.VolumeClaimRollout{}
	if err := c.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if !sameAutoresize(got.Status.Autoresize, skipped) {
		t.Errorf("status.autoresize %+v, want %+v: the pull request's fields were kept", got.Status.Autoresize, skipped)
	}
}

// GrowNow grows a claim below the size asked to that size, under its own
// field manager, which leaves the labels the rollout applied; it never
// shrinks a claim, and never creates one.
func TestGrowNowNeverShrinks(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	ctx := context.Background()
	sts := fixtures.StatefulSet(ns, "ledger", 1, classExpandable, "1Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	// The rollout applies the template's label with the size.
	if err := fixtures.ReplaceTemplates(ctx, c, key, func(s *appsv1.StatefulSet) {
		fixtures.SetTemplateSize("2Gi")(s)
		s.Spec.VolumeClaimTemplates[0].Labels = map[string]string{"tier": "gold"}
	}); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, c, key, "Ready at 2Gi", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && len(v.Status.Claims) == 1 && v.Status.Claims[0].To == "2Gi"
	})
	w := rollout.NewWriter(c, c)

	grown, err := w.GrowNow(ctx, sts, []rollout.Growth{{Claim: "data-ledger-0", To: resource.MustParse("3Gi")}})
	if err != nil || !slices.Equal(grown, []string{"data-ledger-0"}) {
		t.Fatalf("growing to 3Gi: grown %v, %v", grown, err)
	}
	pvc := claim(t, c, ns, "data-ledger-0")
	if r := request(pvc); r.String() != "3Gi" || pvc.Labels["tier"] != "gold" {
		t.Errorf("grown claim requests %s with labels %v, want 3Gi with tier=gold", r.String(), pvc.Labels)
	}

	grown, err = w.GrowNow(ctx, sts, []rollout.Growth{{Claim: "data-ledger-0", To: resource.MustParse("2Gi")}})
	if err != nil || len(grown) != 0 {
		t.Errorf("growing to 2Gi a claim at 3Gi: grown %v, %v; want none", grown, err)
	}
	// Applied, 2Gi would be a shrink the API server refuses, or takes
	// while the storage has not reached 3Gi (recovery from a failed
	// expansion): an error or a request of 2Gi.
	if r := request(claim(t, c, ns, "data-ledger-0")); r.String() != "3Gi" {
		t.Errorf("a claim at 3Gi asked 2Gi requests %s", r.String())
	}

	grown, err = w.GrowNow(ctx, sts, []rollout.Growth{{Claim: "data-ledger-9", To: resource.MustParse("3Gi")}})
	if err == nil || !strings.Contains(err.Error(), "growing PVC "+ns+"/data-ledger-9 to 3Gi now") || len(grown) != 0 {
		t.Errorf("growing a claim that does not exist: grown %v, %v; want an error naming it", grown, err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data-ledger-9"}, pvc); !apierrors.IsNotFound(err) {
		t.Errorf("a claim that did not exist: %v, want none created", err)
	}
}

// behindCache is a client whose first read of a VolumeClaimRollout is the
// copy stale holds, as a cache behind the API server serves it.
type behindCache struct {
	client.Client
	stale  *v1alpha1.VolumeClaimRollout
	served int
}

func (b *behindCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if vcr, ok := obj.(*v1alpha1.VolumeClaimRollout); ok && b.served == 0 {
		b.served++
		b.stale.DeepCopyInto(vcr)
		return nil
	}
	return b.Client.Get(ctx, key, obj, opts...)
}

// sameAutoresize reports whether got says what want says; times compare
// by Equal (the stored one is in UTC).
func sameAutoresize(got *v1alpha1.AutoresizeStatus, want v1alpha1.AutoresizeStatus) bool {
	if got == nil || !got.LastChecked.Equal(&want.LastChecked) {
		return false
	}
	rest := *got
	rest.LastChecked = want.LastChecked
	return rest == want
}

// statusManagers are the field managers of vcr's status.
func statusManagers(vcr *v1alpha1.VolumeClaimRollout) []string {
	var out []string
	for _, m := range vcr.ManagedFields {
		if m.Subresource == "status" {
			out = append(out, m.Manager)
		}
	}
	return out
}
