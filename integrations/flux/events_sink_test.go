package flux

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// fluxOutcome is a Reconciled outcome of a rollout the Kustomization apps
// proposed.
func fluxOutcome(namespace, name string, state outcome.State, msg string) outcome.Outcome {
	return outcome.Outcome{
		Action:      outcome.Reconciled,
		StatefulSet: types.NamespacedName{Namespace: namespace, Name: name},
		Source:      fromKustomization("apps", testRevision),
		State:       state,
		Reason:      "Progressing",
		Message:     msg,
	}
}

// TestNotifierPublishSendsReconciledOutcomes: a Reconciled outcome is the
// event Notify sends, its message cut to 140 characters; other
// actions, and outcomes without revision or Kustomization source, send nothing.
func TestNotifierPublishSendsReconciledOutcomes(t *testing.T) {
	r := newReceiver(t, http.StatusAccepted)
	n := newTestNotifier(t, r, logr.Discard())
	ctx := context.Background()

	converged := fluxOutcome("db", "pg", outcome.Success, "re-created")
	converged.Action = outcome.Converged
	noRevision := fluxOutcome("db", "pg", outcome.Success, "no revision")
	noRevision.Source.Revision = ""
	notFlux := fluxOutcome("db", "pg", outcome.Success, "not proposed by Flux")
	notFlux.Source = v1alpha1.Source{Kind: "StatefulSet", Namespace: "db", Name: "pg", Revision: testRevision}
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

// tenantLabels are the labels a tenant who may edit its StatefulSet can put
// there: those of the platform's Kustomization flux-system/platform.
var tenantLabels = map[string]string{
	LabelKustomizationName:      "platform",
	LabelKustomizationNamespace: "flux-system",
}

// TestNotifierPublishIgnoresWorkloadLabels: the StatefulSet's labels name
// no Kustomization to Flux. A rollout of the StatefulSet's own templates,
// labelled with the platform's Kustomization and a revision of the tenant's
// choosing, gets no event; one a Kustomization proposed gets an event about
// exactly that Kustomization, with the proposal's revision, whatever the
// labels say.
func TestNotifierPublishIgnoresWorkloadLabels(t *testing.T) {
	r := newReceiver(t, http.StatusAccepted)
	n := newTestNotifier(t, r, logr.Discard())
	ctx := context.Background()
	const tenantRevision = "main@sha1:0000000000000000000000000000000000000bad"

	own := outcome.Outcome{
		Action:      outcome.Reconciled,
		StatefulSet: types.NamespacedName{Namespace: "tenant", Name: "db"},
		Labels:      tenantLabels,
		Source:      v1alpha1.Source{Kind: "StatefulSet", Namespace: "tenant", Name: "db", Repository: "https://github.com/platform/infra", Revision: tenantRevision},
		State:       outcome.Success,
		Message:     "own templates",
	}
	proposed := fluxOutcome("tenant", "db", outcome.Success, "proposed")
	proposed.Labels = tenantLabels
	proposed.Source = v1alpha1.Source{Kind: KustomizationKind, Namespace: "tenant", Name: "apps", Revision: testRevision}
	n.Publish(ctx, own)
	n.Publish(ctx, proposed)
	flush(t, n)

	got := r.got()
	if len(got) != 1 {
		t.Fatalf("receiver got %d events, want only the proposal's", len(got))
	}
	var ev struct {
		InvolvedObject struct{ Kind, Namespace, Name string }
		Message        string
		Metadata       map[string]string
	}
	if err := json.Unmarshal(got[0].body, &ev); err != nil {
		t.Fatal(err)
	}
	if o := ev.InvolvedObject; o.Kind != KustomizationKind || o.Namespace != "tenant" || o.Name != "apps" {
		t.Errorf("event is about %s %s/%s, want the proposal's Kustomization tenant/apps", o.Kind, o.Namespace, o.Name)
	}
	if ev.Message != "tenant/db: proposed" || ev.Metadata[MetaRevision] != testRevision || ev.Metadata[MetaCommit] != testSHA {
		t.Errorf("event %q with revision %q, commit %q: want the proposal's (%s)", ev.Message, ev.Metadata[MetaRevision], ev.Metadata[MetaCommit], testRevision)
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
