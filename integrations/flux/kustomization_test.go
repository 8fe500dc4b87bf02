package flux

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/source"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// scriptedBuilder stands in for the artifact fetch and build (tested on
// their own in fetch_test.go and build_test.go): it returns what the test
// says a revision builds to, and counts the builds.
type scriptedBuilder struct {
	builds  atomic.Int32
	objects []*unstructured.Unstructured
	err     error
}

func (b *scriptedBuilder) Build(context.Context, *kustomizev1.Kustomization, *meta.Artifact) (*Result, error) {
	b.builds.Add(1)
	if b.err != nil {
		return nil, b.err
	}
	return &Result{Objects: b.objects, TemplateLabelKeys: []string{"team"}}, nil
}

// builtStatefulSet is a StatefulSet as a build renders it.
func builtStatefulSet(t *testing.T, ns, name, size string) *unstructured.Unstructured {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(statefulSet(ns, name, size))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion("apps/v1")
	u.SetKind("StatefulSet")
	return u
}

func statefulSet(ns, name, size string) *appsv1.StatefulSet {
	replicas := int32(1)
	labels := map[string]string{"app": name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "registry.example/db:1"}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
				},
			}},
		},
	}
}

// watcherFixture is a real API server with the Flux CRDs (no Flux
// controllers: the test writes the status Flux would), a GitRepository and a
// Kustomization, and the watcher called directly.
type watcherFixture struct {
	t       *testing.T
	c       client.Client
	r       *source.Reconciler
	builder *scriptedBuilder
	events  *events.FakeRecorder
	store   *proposal.Store
	key     types.NamespacedName
}

func newWatcherFixture(t *testing.T) *watcherFixture {
	bin, err := testenv.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.StartT(t, testenv.Options{CRDDirs: []string{filepath.Join(bin, "flux-crds")}})
	c := testenv.Client(t, env.Config, kustomizev1.AddToScheme, sourcev1.AddToScheme)
	ctx := context.Background()
	for _, ns := range []string{"flux-system", "shop"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"web", "cache"} {
		if err := c.Create(ctx, statefulSet("shop", name, "1Gi")); err != nil {
			t.Fatal(err)
		}
	}
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "apps"},
		Spec:       sourcev1.GitRepositorySpec{URL: "https://git.example.com/org/apps.git", Interval: metav1.Duration{Duration: time.Minute}},
	}
	if err := c.Create(ctx, repo); err != nil {
		t.Fatal(err)
	}
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "apps"},
		Spec: kustomizev1.KustomizationSpec{
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "apps"},
			Path:      "./", Prune: true, Interval: metav1.Duration{Duration: time.Minute},
		},
	}
	if err := c.Create(ctx, ks); err != nil {
		t.Fatal(err)
	}
	f := &watcherFixture{t: t, c: c, builder: &scriptedBuilder{}, events: events.NewFakeRecorder(100), store: proposal.NewStore(),
		key: types.NamespacedName{Namespace: "flux-system", Name: "apps"}}
	tool := &Kustomizations{Client: c, Reader: c, Builder: f.builder, FieldOwner: "claimwarden"}
	if f.r, err = source.NewReconciler(tool, source.Clients{Cached: c, Uncached: c, Recorder: outcome.Recorder{EventRecorder: f.events}}, source.Options{Proposals: f.store}); err != nil {
		t.Fatal(err)
	}
	return f
}

// flux writes what source-controller and kustomize-controller would: the
// artifact of revision, attempted by the Kustomization, applied = applied,
// Ready True when the attempt was applied, False when it failed.
func (f *watcherFixture) flux(artifact, attempted, applied string) {
	f.t.Helper()
	ready := metav1.ConditionTrue
	if attempted != applied {
		ready = metav1.ConditionFalse
	}
	f.fluxReady(artifact, attempted, applied, ready)
}

// fluxReady is flux with the Ready condition's status: Unknown while
// kustomize-controller applies the attempted revision.
func (f *watcherFixture) fluxReady(artifact, attempted, applied string, ready metav1.ConditionStatus) {
	f.t.Helper()
	ctx := context.Background()
	repo := &sourcev1.GitRepository{}
	if err := f.c.Get(ctx, f.key, repo); err != nil {
		f.t.Fatal(err)
	}
	repo.Status.Artifact = &meta.Artifact{
		Path: "gitrepository/flux-system/apps/" + artifact + ".tar.gz", URL: "http://source-controller/" + artifact + ".tar.gz",
		Revision: artifact, Digest: "sha256:0000000000000000000000000000000000000000000000000000000000000000",
		LastUpdateTime: metav1.Now(),
	}
	if err := f.c.Status().Update(ctx, repo); err != nil {
		f.t.Fatal(err)
	}
	ks := &kustomizev1.Kustomization{}
	if err := f.c.Get(ctx, f.key, ks); err != nil {
		f.t.Fatal(err)
	}
	ks.Status.LastAttemptedRevision, ks.Status.LastAppliedRevision = attempted, applied
	ks.Status.Conditions = []metav1.Condition{{Type: meta.ReadyCondition, Status: ready, Reason: string(ready), LastTransitionTime: metav1.Now()}}
	// What kustomize-controller's earlier applies recorded: the shop's two
	// StatefulSets are this Kustomization's.
	ks.Status.Inventory = &kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{
		{ID: "shop_web_apps_StatefulSet", Version: "v1"}, {ID: "shop_cache_apps_StatefulSet", Version: "v1"}}}
	if err := f.c.Status().Update(ctx, ks); err != nil {
		f.t.Fatal(err)
	}
}

func (f *watcherFixture) reconcile() error {
	f.t.Helper()
	_, err := f.r.Reconcile(ctrl.LoggerInto(context.Background(), ctrl.Log), ctrl.Request{NamespacedName: f.key})
	return err
}

// said returns the events recorded since the last call.
func (f *watcherFixture) said() []string {
	var out []string
	for {
		select {
		case e := <-f.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestKustomizationWatcher(t *testing.T) {
	f := newWatcherFixture(t)
	web := types.NamespacedName{Namespace: "shop", Name: "web"}
	cache := types.NamespacedName{Namespace: "shop", Name: "cache"}

	// Applied: nothing is built.
	f.flux("main@sha1:a1", "main@sha1:a1", "main@sha1:a1")
	if err := f.reconcile(); err != nil || f.builder.builds.Load() != 0 {
		t.Fatalf("applied revision: err %v, %d builds, want none", err, f.builder.builds.Load())
	}

	// A revision Flux cannot apply: web grows, cache does not.
	f.builder.objects = []*unstructured.Unstructured{builtStatefulSet(t, "shop", "web", "2Gi"), builtStatefulSet(t, "shop", "cache", "1Gi")}
	f.flux("main@sha1:b2", "main@sha1:b2", "main@sha1:a1")
	if err := f.reconcile(); err != nil {
		t.Fatal(err)
	}
	p, ok := f.store.Get(web)
	if !ok {
		t.Fatal("no proposal for shop/web")
	}
	if s := p.Source; s.Kind != "Kustomization" || s.Namespace != "flux-system" || s.Name != "apps" || s.Repository != "https://git.example.com/org/apps.git" || s.Revision != "main@sha1:b2" {
		t.Errorf("source %+v", s)
	}
	if len(p.IgnoredLabels) != 1 || p.IgnoredLabels[0] != "team" {
		t.Errorf("ignored labels %v, want the build's [team]", p.IgnoredLabels)
	}
	if _, ok := f.store.Get(cache); ok {
		t.Error("shop/cache proposed although its templates did not change")
	}
	if got := f.said(); len(got) != 1 || !strings.Contains(got[0], ReasonProposed) || !strings.Contains(got[0], "shop/web") {
		t.Errorf("events %q, want one proposal naming shop/web", got)
	}

	// The same revision again (Flux retrying): nothing is built again.
	if err := f.reconcile(); err != nil || f.builder.builds.Load() != 1 {
		t.Fatalf("same revision: err %v, %d builds, want 1", err, f.builder.builds.Load())
	}

	// The source moved on but Flux has not attempted it yet: wait for Flux.
	f.flux("main@sha1:c3", "main@sha1:b2", "main@sha1:a1")
	if err := f.reconcile(); err != nil || f.builder.builds.Load() != 1 {
		t.Fatalf("unattempted artifact: err %v, %d builds, want still 1", err, f.builder.builds.Load())
	}

	// A revision that cannot be built: the rollouts say so, and the
	// controller retries (an error means back-off).
	f.builder.err = errors.New("fetching artifact http://source-controller/c3.tar.gz: 404 Not Found")
	f.flux("main@sha1:c3", "main@sha1:c3", "main@sha1:a1")
	if err := f.reconcile(); err == nil {
		t.Fatal("a failed build was not returned for a retry")
	}
	if p, _ := f.store.Get(web); !strings.Contains(p.SourceError, "404 Not Found") {
		t.Errorf("proposal source error %q, want the fetch error", p.SourceError)
	}
	if got := f.said(); len(got) != 1 || !strings.Contains(got[0], ReasonBuildFailed) {
		t.Errorf("events %q, want one build failure", got)
	}

	// It builds now, without web: removed from Git, its proposal goes.
	f.builder.err = nil
	f.builder.objects = []*unstructured.Unstructured{builtStatefulSet(t, "shop", "cache", "3Gi")}
	if err := f.reconcile(); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.store.Get(web); ok {
		t.Error("the proposal of a StatefulSet removed from Git stayed")
	}
	if p, ok := f.store.Get(cache); !ok || p.SourceError != "" || p.Source.Revision != "main@sha1:c3" {
		t.Errorf("cache proposal %+v (found %v), want revision c3 without error", p.Source, ok)
	}
	f.said()

	// Suspended: its proposals are dropped, and that is said once.
	ks := &kustomizev1.Kustomization{}
	if err := f.c.Get(context.Background(), f.key, ks); err != nil {
		t.Fatal(err)
	}
	ks.Spec.Suspend = true
	if err := f.c.Update(context.Background(), ks); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := f.reconcile(); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := f.store.Get(cache); ok {
		t.Error("a suspended Kustomization's proposal stayed")
	}
	if got := f.said(); len(got) != 1 || !strings.Contains(got[0], ReasonSuspended) {
		t.Errorf("events %q, want the suspension said once", got)
	}
}

// kustomize-controller records the revision it attempts before applying
// it, Ready Unknown meanwhile; claimwarden reads it then, to start before
// Flux fails. A revision being applied that changes no template has not
// failed: nothing is said of it (ClaimwardenNothingToDo landed on
// Kustomizations whose apply then succeeded, on every commit). A failed
// attempt that changes none says so, once.
func TestKustomizationBeingAppliedSaysNothing(t *testing.T) {
	f := newWatcherFixture(t)
	f.builder.objects = []*unstructured.Unstructured{builtStatefulSet(t, "shop", "web", "1Gi"), builtStatefulSet(t, "shop", "cache", "1Gi")}
	f.fluxReady("main@sha1:b2", "main@sha1:b2", "main@sha1:a1", metav1.ConditionUnknown)
	if err := f.reconcile(); err != nil || f.builder.builds.Load() != 1 {
		t.Fatalf("a revision being applied: err %v, %d builds, want 1 (read before Flux fails)", err, f.builder.builds.Load())
	}
	if got := f.said(); len(got) != 0 {
		t.Errorf("a revision being applied: events %q, want none", got)
	}

	f.flux("main@sha1:c3", "main@sha1:c3", "main@sha1:a1")
	for range 2 {
		if err := f.reconcile(); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.said(); len(got) != 1 || !strings.Contains(got[0], ReasonNothingProposed) || !strings.Contains(got[0], "revision main@sha1:c3 changes no StatefulSet's volumeClaimTemplates") {
		t.Errorf("a failed revision: events %q, want one %s", got, ReasonNothingProposed)
	}
}
