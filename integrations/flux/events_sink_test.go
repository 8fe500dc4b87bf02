package flux

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// fluxOutcome is a Reconciled outcome of a StatefulSet the Kustomization
// apps applied.
func fluxOutcome(namespace, name string, state outcome.State, msg string) outcome.Outcome {
	return outcome.Outcome{
		Action:      outcome.Reconciled,
		StatefulSet: types.NamespacedName{Namespace: namespace, Name: name},
		Labels:      fluxStatefulSet(namespace, name, "apps").Labels,
		Source:      v1alpha1.Source{Kind: "Kustomization", Namespace: "flux-system", Name: "apps", Revision: testRevision},
		State:       state,
		Reason:      "Progressing",
		Message:     msg,
	}
}

// TestNotifierPublishSendsReconciledOutcomes: a Reconciled outcome is the
// event Notify sends, its message cut to 140 characters; other
// actions, and outcomes without revision or Kustomization, send nothing.
func TestNotifierPublishSendsReconciledOutcomes(t *testing.T) {
	r := newReceiver(t, http.StatusAccepted)
	n := newTestNotifier(t, r, logr.Discard())
	ctx := context.Background()

	converged := fluxOutcome("db", "pg", outcome.Success, "re-created")
	converged.Action = outcome.Converged
	noRevision := fluxOutcome("db", "pg", outcome.Success, "no revision")
	noRevision.Source.Revision = ""
	notFlux := fluxOutcome("db", "pg", outcome.Success, "not applied by Flux")
	notFlux.Labels = map[string]string{"app": "pg"}
	long := strings.Repeat("x", 300)
	for _, o := range []outcome.Outcome{converged, noRevision, notFlux, fluxOutcome("db", "pg", outcome.Pending, long), fluxOutcome("db", "pg", outcome.Pending, long)} {
		n.Publish(ctx, o)
	}
	flush(t, n)
	want := []string{"db/pg: " + strings.Repeat("x", 139) + "…"}
	if got := r.messages(); !slices.Equal(got, want) {
		t.Errorf("messages = %q, want %q", got, want)
	}
}

// TestNotifierForgetDropsTheStatefulSet: after Forget, the StatefulSet's
// outcomes are sent again; other StatefulSets' stay remembered.
func TestNotifierForgetDropsTheStatefulSet(t *testing.T) {
	r := newReceiver(t, http.StatusAccepted)
	n := newTestNotifier(t, r, logr.Discard())
	ctx := context.Background()

	pg, web := fluxOutcome("db", "pg", outcome.Pending, "1/3"), fluxOutcome("db", "web", outcome.Pending, "1/3")
	n.Publish(ctx, pg)
	n.Publish(ctx, fluxOutcome("db", "pg", outcome.Success, "3/3"))
	n.Publish(ctx, web)
	n.Forget(pg.StatefulSet)
	if got := n.sent.Len(); got != 1 {
		t.Errorf("memory holds %d events after Forget, want web's 1", got)
	}
	n.Publish(ctx, pg)
	n.Publish(ctx, web)
	flush(t, n)
	want := []string{"db/pg: 1/3", "db/pg: 3/3", "db/web: 1/3", "db/pg: 1/3"}
	if got := r.messages(); !slices.Equal(got, want) {
		t.Errorf("messages = %q, want %q", got, want)
	}
}

// The rollout controller publishes to the Notifier as one of its sinks.
var _ outcome.Sink = (*Notifier)(nil)

func TestShortDescription(t *testing.T) {
	fits := strings.Repeat("é", 140)
	if got := outcome.ShortDescription(fits); got != fits {
		t.Errorf("a 140-character description was cut to %q", got)
	}
	if got, want := outcome.ShortDescription(fits+"é"), strings.Repeat("é", 139)+"…"; got != want {
		t.Errorf("shortDescription cut 141 characters to %q, want %q", got, want)
	}
}
