package outcome

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

func reconciled(rev string, state State, msg string) Outcome {
	return Outcome{
		Action: Reconciled, StatefulSet: types.NamespacedName{Namespace: "shop", Name: "web"},
		Source: v1alpha1.Source{Kind: "Kustomization", Namespace: "flux-system", Name: "apps", Revision: rev},
		State:  state, Reason: "R", Message: msg,
	}
}

func drain(rec *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// Each change is said once although the core publishes on every reconcile,
// a newer revision supersedes a pending one, and after Forget (or a
// restart, from Previous) the sink neither repeats nor loses a change.
func TestEventSinkSaysEachChangeOnce(t *testing.T) {
	rec := events.NewFakeRecorder(100)
	s := NewEventSink(Recorder{EventRecorder: rec}, 0)
	ctx := context.Background()

	s.Publish(ctx, reconciled("main@sha1:aaaa", Pending, "0/3 compatible"))
	s.Publish(ctx, reconciled("main@sha1:aaaa", Failure, "data-web-0: max-step: too big"))
	s.Publish(ctx, reconciled("main@sha1:aaaa", Failure, "data-web-0: max-step: too big"))
	if got := drain(rec); len(got) != 1 || !strings.Contains(got[0], "Warning R data-web-0: max-step: too big") {
		t.Fatalf("a block repeated on every reconcile must be said once: %q", got)
	}
	s.Publish(ctx, reconciled("main@sha1:bbbb", Pending, "0/3 compatible"))
	s.Publish(ctx, reconciled("main@sha1:cccc", Pending, "0/3 compatible"))
	got := drain(rec)
	if len(got) != 1 || !strings.Contains(got[0], v1alpha1.ReasonSuperseded) || !strings.Contains(got[0], "revision main@sha1:bbbb superseded by main@sha1:cccc") {
		t.Fatalf("only the pending revision bbbb is superseded (aaaa was denied): %q", got)
	}
	s.Publish(ctx, reconciled("main@sha1:cccc", Success, "3/3 claims compatible"))
	s.Publish(ctx, reconciled("main@sha1:cccc", Success, "3/3 claims compatible"))
	if got := drain(rec); len(got) != 1 || !strings.Contains(got[0], v1alpha1.ReasonCompatible) {
		t.Fatalf("completion once: %q", got)
	}

	s.Forget(types.NamespacedName{Namespace: "shop", Name: "web"})
	if s.lastTold.Len() != 0 {
		t.Fatalf("Forget left %d entries", s.lastTold.Len())
	}
	// A restart: the rollout recorded success; nothing completed now.
	o := reconciled("main@sha1:cccc", Success, "3/3 claims compatible")
	o.Previous = &Previous{Source: o.Source, State: Success, Message: o.Message}
	s.Publish(ctx, o)
	if got := drain(rec); len(got) != 0 {
		t.Fatalf("a restart repeated %q", got)
	}
}

func TestEventSinkIsBounded(t *testing.T) {
	rec := events.NewFakeRecorder(10)
	s := NewEventSink(Recorder{EventRecorder: rec}, 100)
	for i := range 1000 {
		o := reconciled("r", Pending, "x")
		o.StatefulSet.Name = strings.Repeat("w", 1+i%50) + string(rune('a'+i%26)) + string(rune('a'+i/26%26))
		s.Publish(context.Background(), o)
	}
	if n := s.lastTold.Len(); n > 100 {
		t.Fatalf("remembers %d StatefulSets, bound 100", n)
	}
}
