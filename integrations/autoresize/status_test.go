package autoresize

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/usage"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// A check that finds what the status says writes nothing: a StatefulSet at
// rest costs no write per interval. One that finds something else writes,
// and a field it no longer has is removed, not kept (a merge patch of the
// new status alone kept them, and every later check wrote again); the
// sizes the pull request shown proposes, and the commit claimwarden made on
// its branch, stay while it is shown. On a real
// API server with claimwarden's CRDs.
func TestRecordWritesOnlyWhatChanged(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{CRDDirs: []string{filepath.Join("..", "..", "config", "crd", "bases")}})
	c := testenv.Client(t, env.Config, v1alpha1.AddToScheme)
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: "shop", Name: "web"}
	if err := c.Create(ctx, &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
		t.Fatal(err)
	}
	ctl := &Controller{Client: c, Writer: rollout.NewWriter(c, c), Log: logr.Discard()}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	at := func(sec int) metav1.Time { return metaTime(time.Unix(1_800_000_000+int64(sec), 0)) }
	stored := func() (*v1alpha1.AutoresizeStatus, string) {
		t.Helper()
		got := &v1alpha1.VolumeClaimRollout{}
		if err := c.Get(ctx, key, got); err != nil {
			t.Fatal(err)
		}
		return got.Status.Autoresize, got.ResourceVersion
	}
	// recordTwice records st, which must store want, then st checked a
	// minute later, which must write nothing.
	recordTwice := func(st, want v1alpha1.AutoresizeStatus) {
		t.Helper()
		ctl.record(ctx, sts, st)
		got, version := stored()
		if got == nil || !got.LastChecked.Equal(&want.LastChecked) {
			t.Fatalf("stored %+v, want %+v", got, want)
		}
		// The time is compared by Equal above: the stored one is in UTC.
		rest := *got
		rest.LastChecked = want.LastChecked
		if rest != want {
			t.Fatalf("stored %+v, want %+v", got, want)
		}
		st.LastChecked = metav1.NewTime(st.LastChecked.Add(time.Minute))
		ctl.record(ctx, sts, st)
		if again, v := stored(); v != version {
			t.Errorf("a check that found the same wrote %+v (resourceVersion %s → %s)", again, version, v)
		}
	}

	open := v1alpha1.AutoresizeStatus{Usage: "85% data-web-0", PullRequest: "https://git.example.com/shop/pulls/1", State: "open",
		Proposed: "data 1Gi → 2Gi", Commit: "c0ffee", Message: "pull request https://git.example.com/shop/pulls/1 proposes data 1Gi → 2Gi", LastChecked: at(0)}
	recordTwice(open, open)
	if got := ctl.recordedCommit(ctx, sts, open.PullRequest); got != "c0ffee" {
		t.Errorf("the commit recorded for %s: %q, want c0ffee", open.PullRequest, got)
	}
	if got := ctl.recordedCommit(ctx, sts, "https://git.example.com/shop/pulls/2"); got != "" {
		t.Errorf("the commit recorded for another pull request: %q, want none", got)
	}
	merged := v1alpha1.AutoresizeStatus{Usage: "44% data-web-0", PullRequest: open.PullRequest, State: "merged",
		Message: "no claim needs to grow", LastChecked: at(120)}
	shown := merged
	shown.Proposed, shown.Commit = open.Proposed, open.Commit
	recordTwice(merged, shown)
	skipped := v1alpha1.AutoresizeStatus{Usage: "44% data-web-0", LastChecked: at(240),
		Message: "the repository https://git.example.com/shop is not among autoresize's repositoryPrefixes for namespace shop: no pull request is opened there"}
	recordTwice(skipped, skipped)

	ctl.record(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"}}, merged)
	if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "db"}, &v1alpha1.VolumeClaimRollout{}); !apierrors.IsNotFound(err) {
		t.Errorf("a StatefulSet without a VolumeClaimRollout: got %v, want none created", err)
	}
}

// Of claims as full, the status names the first by name whatever order the
// cache lists them in: another name at each check would be a write at each.
func TestFullest(t *testing.T) {
	claims := shop("100Gi").Claims
	used := map[string]usage.Usage{
		"data-web-0": {CapacityBytes: 10 * gi, UsedBytes: 45 * gi / 10},
		"data-web-1": {CapacityBytes: 10 * gi, UsedBytes: 45 * gi / 10},
		"logs-web-0": {CapacityBytes: gi, UsedBytes: gi / 10},
	}
	for range 2 {
		if got := fullest(claims, used); got != "45% data-web-0" {
			t.Errorf("claims %v: %q, want 45%% data-web-0", names(claims), got)
		}
		slices.Reverse(claims)
	}
	// Figures not decided on (a capacity that is not the claim's, series
	// that disagree) are not shown, however full they say it is.
	used["logs-web-1"] = usage.Usage{CapacityBytes: 100 * gi, UsedBytes: 99 * gi}
	used["data-web-1"] = usage.Usage{Problem: "2 series of the selector report it, with different figures"}
	if got := fullest(claims, used); got != "45% data-web-0" {
		t.Errorf("with forged figures: %q, want 45%% data-web-0", got)
	}
	if got := fullest(claims, map[string]usage.Usage{}); got != "" {
		t.Errorf("no usage: %q, want none", got)
	}
}

func names(claims []corev1.PersistentVolumeClaim) []string {
	out := make([]string, len(claims))
	for i, c := range claims {
		out[i] = c.Name
	}
	return out
}
