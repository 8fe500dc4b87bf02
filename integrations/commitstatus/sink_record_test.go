package commitstatus

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// TestCommitStatusSinkRecordsPostedOnItsRollout runs against a real API
// server: each posted status lands in status.lastCommitStatus of the
// VolumeClaimRollout of the StatefulSet it is about, written by
// claimwarden's field manager; a rollout that is gone is no error.
func TestCommitStatusSinkRecordsPostedOnItsRollout(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{CRDDirs: []string{filepath.Join("..", "..", "config", "crd", "bases")}})
	ctx := context.Background()
	k8s := testenv.Client(t, env.Config, v1alpha1.AddToScheme)
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"web", "db"} {
		if err := k8s.Create(ctx, &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}); err != nil {
			t.Fatal(err)
		}
	}

	h := newFakeProvider(nil)
	errs := newErrorLogSink()
	s := newSink(t, h, func(o *CommitStatusSinkOptions) {
		o.Records = rollout.NewWriter(k8s, k8s)
		o.Logger = logr.New(errs)
		// One worker posts in order: once the last status is recorded,
		// every earlier OnPosted has returned.
		o.Reporter.Workers = 1
	})

	gone := reconciled(shaA, outcome.Success, "3/3 claims compatible")
	gone.StatefulSet.Name = "gone"
	s.Publish(ctx, gone)
	db := reconciled(shaB, outcome.Failure, "data-db-0: max-step: +300% exceeds 100%")
	db.StatefulSet.Name = "db"
	s.Publish(ctx, db)
	s.Publish(ctx, reconciled(shaA, outcome.Pending, "1/3 claims compatible"))

	recorded := func(name string) *v1alpha1.CommitStatus {
		var vcr v1alpha1.VolumeClaimRollout
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: "shop", Name: name}, &vcr); err != nil {
			t.Fatal(err)
		}
		return vcr.Status.LastCommitStatus
	}
	waitUntil(t, "web's status recorded", func() bool { return recorded("web") != nil })

	for _, c := range []struct {
		name string
		want v1alpha1.CommitStatus
	}{
		{"web", v1alpha1.CommitStatus{Repository: "git.example.com/shop/web", Revision: shaA, Context: "claimwarden/shop/web", State: "pending", Description: "1/3 claims compatible"}},
		{"db", v1alpha1.CommitStatus{Repository: "git.example.com/shop/web", Revision: shaB, Context: "claimwarden/shop/db", State: "failure", Description: "data-db-0: max-step: +300% exceeds 100%"}},
	} {
		got := recorded(c.name)
		if got == nil {
			t.Errorf("%s: nothing recorded", c.name)
			continue
		}
		if got.PostedAt.IsZero() {
			t.Errorf("%s: no postedAt", c.name)
		}
		got.PostedAt = metav1.Time{}
		if *got != c.want {
			t.Errorf("%s recorded %+v, want %+v", c.name, *got, c.want)
		}
	}
	if lines := errs.errorLines(); len(lines) != 0 {
		t.Errorf("errors logged: %q", lines)
	}

	var vcr v1alpha1.VolumeClaimRollout
	if err := k8s.Get(ctx, webSTS, &vcr); err != nil {
		t.Fatal(err)
	}
	var byController bool
	for _, f := range vcr.ManagedFields {
		byController = byController || (f.Manager == v1alpha1.ControllerName && f.Subresource == "status")
	}
	if !byController {
		t.Errorf("status not written by field manager %q: %+v", v1alpha1.ControllerName, vcr.ManagedFields)
	}

	// What was recorded seeds a restarted sink: nothing is posted again.
	restarted := newSink(t, h, nil)
	o := reconciled(shaA, outcome.Pending, "1/3 claims compatible")
	o.Recorded = recorded("web")
	restarted.Publish(ctx, o)
	if n := restarted.reporter.Pending(); n != 0 {
		t.Errorf("a restarted sink queued the recorded status again (Pending = %d)", n)
	}
}
