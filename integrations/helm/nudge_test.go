package helm

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/go-logr/logr/funcr"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/source"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// countingPatches counts the patches made through it (the upgrade requests)
// once the API server answered them: counted on the way in, a test that
// stops the Nudger once it sees the count would cancel the patch in flight.
type countingPatches struct {
	client.Client
	patches atomic.Int32
}

func (c *countingPatches) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	err := c.Client.Patch(ctx, obj, patch, opts...)
	c.patches.Add(1)
	return err
}

// countingEvents counts the events recorded through it and records them.
type countingEvents struct {
	events.EventRecorder
	n atomic.Int32
}

func (c *countingEvents) Eventf(regarding, related runtime.Object, eventType, reason, action, note string, args ...any) {
	c.n.Add(1)
	c.EventRecorder.Eventf(regarding, related, eventType, reason, action, note, args...)
}

// releaseProposals runs the source Reconciler of tool over obj once, then a
// Nudger of it while every StatefulSet it proposed is reported converged
// (what the rollout controller publishes), the first alone until the
// Nudger decided to wait for the rest, and returns once the Nudger made its
// nudges; it fails unless it proposed want, as one round.
func releaseProposals(t *testing.T, c client.Client, tool source.Tool, obj client.Object, want ...string) {
	t.Helper()
	ctx := ctrl.LoggerInto(context.Background(), ctrl.Log)
	store := proposal.NewStore()
	r, err := source.NewReconciler(tool, source.Clients{Cached: c, Uncached: c, Recorder: outcome.Recorder{EventRecorder: events.NewFakeRecorder(100)}},
		source.Options{Proposals: store})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(obj)}); err != nil {
		t.Fatal(err)
	}
	owner := proposal.Owner{Kind: tool.Kind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
	ps := store.Of(owner)
	var got []string
	for _, p := range ps {
		got = append(got, p.Key().Name)
		if p.Round != ps[0].Round {
			t.Errorf("%s proposed in round %d, %s in round %d: want one round", p.Key(), p.Round, ps[0].Key(), ps[0].Round)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("proposed %v, want %v", got, want)
	}

	runCtx, cancel := context.WithCancel(ctx)
	var waiting atomic.Int32
	log := funcr.New(func(_, args string) {
		if strings.Contains(args, "waiting for the others") {
			waiting.Add(1)
		}
	}, funcr.Options{Verbosity: 1})
	nudger := source.NewNudger(tool, store, log, time.Hour)
	stopped := make(chan error)
	go func() { stopped <- nudger.Start(runCtx) }()
	for i, p := range ps {
		nudger.Publish(ctx, outcome.Outcome{Action: outcome.Converged, StatefulSet: p.Key(), Source: p.Source})
		nudger.Publish(ctx, outcome.Outcome{Action: outcome.Reconciled, StatefulSet: p.Key(), Source: p.Source, State: outcome.Pending})
		if i == 0 {
			// The Nudger decided on the first convergence alone: it waits.
			waitUntil(t, "the Nudger waiting for the rest of the release", func() bool {
				if nudged(tool) > 0 {
					t.Fatalf("nudged once %s converged, before the rest of the release", p.Key())
				}
				return waiting.Load() > 0
			})
		}
	}
	waitUntil(t, "the nudge", func() bool { return nudged(tool) > 0 })
	cancel()
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
}

// nudged is how often tool's nudge reached the API server.
func nudged(tool source.Tool) int32 {
	switch t := tool.(type) {
	case *HelmReleases:
		return t.Client.(*countingPatches).patches.Load()
	case *CLIReleases:
		return t.Recorder.EventRecorder.(*countingEvents).n.Load()
	}
	return 0
}

// TestOneNudgePerFailedRelease: a failed release whose two StatefulSets
// claimwarden converged is nudged once, on a real API server: through a
// Flux HelmRelease one upgrade request (each is a forced upgrade, a release
// version of its own), with plain Helm one ClaimwardenUpgradeAgain event on
// the record naming both (events about one record with one reason are
// merged, showing only the first one's words).
func TestOneNudgePerFailedRelease(t *testing.T) {
	bin, err := testenv.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.StartT(t, testenv.Options{CRDDirs: []string{filepath.Join(bin, "flux-crds")}})
	c := kubeClient(t, env)
	ctx := context.Background()

	t.Run("Flux HelmRelease", func(t *testing.T) {
		hr := failedRelease(immutable)
		hr.Spec.Interval = metav1.Duration{Duration: time.Minute}
		hr.Status.HelmChart = "shop/shop-web"
		chart := &sourcev1.HelmChart{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "shop-web"},
			Spec:       sourcev1.HelmChartSpec{Chart: "./chart", SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"}, Interval: metav1.Duration{Duration: time.Minute}},
			Status: sourcev1.HelmChartStatus{ObservedSourceArtifactRevision: commit,
				Artifact: &meta.Artifact{Revision: "0.2.0", Path: "p", URL: "http://x/p", Digest: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", LastUpdateTime: metav1.Now()}},
		}
		repo := &sourcev1.GitRepository{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "fleet"},
			Spec:       sourcev1.GitRepositorySpec{URL: "https://git.example.com/o/fleet.git", Interval: metav1.Duration{Duration: time.Minute}},
		}
		// The record renders web, stranger and fluxed; web and fluxed
		// are live and the HelmRelease's, stranger is not live yet.
		record := cliRecord(t, "shop", 4, rcommon.StatusFailed, immutable)
		owned := map[string]string{annotationReleaseName: "web", annotationReleaseNamespace: "shop"}
		labelled := map[string]string{HelmReleaseNameLabel: "web", HelmReleaseNamespaceLabel: "shop"}
		web, fluxed := liveStatefulSet("shop", "web", owned), liveStatefulSet("shop", "fluxed", owned)
		web.Labels, fluxed.Labels = labelled, labelled
		create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, repo, chart, hr, record, web, fluxed)

		patches := &countingPatches{Client: c}
		tool := &HelmReleases{Client: patches, Reader: c, FieldOwner: "claimwarden"}
		releaseProposals(t, c, tool, hr, "fluxed", "web")
		if n := patches.patches.Load(); n != 1 {
			t.Errorf("%d upgrade requests for one failed release, want 1", n)
		}
		var got helmv2.HelmRelease
		if err := c.Get(ctx, client.ObjectKeyFromObject(hr), &got); err != nil {
			t.Fatal(err)
		}
		if a := got.Annotations; a[meta.ReconcileRequestAnnotation] == "" || a[helmv2.ForceRequestAnnotation] != a[meta.ReconcileRequestAnnotation] {
			t.Errorf("annotations %v, want a forced upgrade requested", a)
		}
	})

	t.Run("plain Helm", func(t *testing.T) {
		ns := "ci"
		owned := map[string]string{annotationReleaseName: "web", annotationReleaseNamespace: ns}
		create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			liveStatefulSet(ns, "web", owned), liveStatefulSet(ns, "stranger", owned),
			cliRecord(t, ns, 1, rcommon.StatusDeployed, "Install complete"),
			cliRecord(t, ns, 2, rcommon.StatusFailed, upgradeFailed))
		broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: kubernetes.NewForConfigOrDie(env.Config).EventsV1()})
		stop := make(chan struct{})
		defer close(stop)
		broadcaster.StartRecordingToSink(stop)
		defer broadcaster.Shutdown()
		recorder := &countingEvents{EventRecorder: broadcaster.NewRecorder(clientgoscheme.Scheme, v1alpha1.ControllerName)}
		tool := &CLIReleases{Cached: c, Reader: c, Recorder: outcome.Recorder{EventRecorder: recorder}}
		releaseProposals(t, c, tool, metadataOf(t, c, ns, SecretName("web", 2)), "stranger", "web")
		if n := recorder.n.Load(); n != 1 {
			t.Errorf("%d events for one failed release, want 1", n)
		}
		// What `kubectl describe secret sh.helm.release.v1.web.v2` shows.
		var said eventsv1.Event
		waitUntil(t, "the event on the release record", func() bool {
			var list eventsv1.EventList
			if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			for _, e := range list.Items {
				if e.Regarding.Kind == "Secret" && e.Regarding.Name == SecretName("web", 2) && e.Reason == ReasonUpgradeAgain {
					said = e
					return true
				}
			}
			return false
		})
		if !strings.Contains(said.Note, "StatefulSets ci/stranger and ci/web converged") || !strings.Contains(said.Note, "run the same `helm upgrade` again") || said.Series != nil {
			t.Errorf("event %q (series %+v), want one naming both StatefulSets", said.Note, said.Series)
		}
	})
}

// kubeClient is an admin client of env knowing Flux's HelmRelease and sources.
func kubeClient(t *testing.T, env *testenv.Env) client.Client {
	t.Helper()
	c := testenv.Client(t, env.Config, helmv2.AddToScheme, sourcev1.AddToScheme)
	return c
}

// waitUntil polls ok until it holds, for at most 10 s.
func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 10 s", what)
		}
		time.Sleep(fixtures.Poll)
	}
}
