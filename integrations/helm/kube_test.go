package helm

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/source"
	"github.com/claimwarden/claimwarden/test/testenv"
)

const commit = "main@sha1:0123456789abcdef0123456789abcdef01234567"

// kube starts a control plane with the Flux CRDs and returns an admin client.
func kube(t *testing.T) client.Client {
	t.Helper()
	bin, err := testenv.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.StartT(t, testenv.Options{CRDDirs: []string{filepath.Join(bin, "flux-crds")}})
	c := testenv.Client(t, env.Config, helmv2.AddToScheme, sourcev1.AddToScheme, kustomizev1.AddToScheme)
	return c
}

// create creates objs, then writes the status each Flux object was given
// (the API server drops a status on create).
func create(t *testing.T, c client.Client, objs ...client.Object) {
	t.Helper()
	ctx := context.Background()
	for _, o := range objs {
		withStatus := o.DeepCopyObject().(client.Object)
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		switch o.(type) {
		case *corev1.Namespace, *corev1.Secret, *sourcev1.GitRepository:
			continue
		}
		withStatus.SetResourceVersion(o.GetResourceVersion())
		if err := c.Status().Update(ctx, withStatus); err != nil {
			t.Fatal(err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
	}
}

// releaseSecret is release version of web in ns as Helm's Secrets driver stores it.
func releaseSecret(t *testing.T, ns string, version int) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: SecretName("web", version), Labels: map[string]string{"owner": "helm", "name": "web"}},
		Type:       "helm.sh/release.v1",
		Data:       map[string][]byte{releaseKey: encode(t, release(version))},
	}
}

// TestDesiredAndNudge reads a failed release's StatefulSets and provenance
// from a real API server, then nudges the HelmRelease.
func TestDesiredAndNudge(t *testing.T) {
	c := kube(t)
	ctx := context.Background()
	hr := failedRelease(immutable)
	hr.Spec.Interval = metav1.Duration{Duration: 60e9}
	chart := &sourcev1.HelmChart{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "shop-web"},
		Spec:       sourcev1.HelmChartSpec{Chart: "./chart", SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"}, Interval: metav1.Duration{Duration: 60e9}},
		Status: sourcev1.HelmChartStatus{ObservedSourceArtifactRevision: commit,
			Artifact: &meta.Artifact{Revision: "0.2.0", Path: "p", URL: "http://x/p", Digest: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", LastUpdateTime: metav1.Now()}},
	}
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "fleet"},
		Spec:       sourcev1.GitRepositorySpec{URL: "https://token@git.example.com/o/fleet.git", Interval: metav1.Duration{Duration: 60e9}},
	}
	hr.Status.HelmChart = "shop/shop-web"
	create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, repo, chart, hr,
		releaseSecret(t, "shop", 4))

	tool := &HelmReleases{Client: c, Reader: c, FieldOwner: "claimwarden"}
	d, err := tool.Desired(ctx, hr)
	if err != nil {
		t.Fatal(err)
	}
	if d.Waiting != "" || len(d.Candidates) != 1 || d.Candidates[0].Namespace != "shop" || d.Candidates[0].Name != "web" {
		t.Fatalf("got %+v", d)
	}
	if d.Repository != "https://git.example.com/o/fleet.git" || d.Revision != commit || d.Chart != "web@0.2.0" {
		t.Errorf("provenance %q %q chart %q", d.Repository, d.Revision, d.Chart)
	}

	t.Run("the HelmChart built a newer chart", func(t *testing.T) {
		newer := hr.DeepCopy()
		newer.Status.History[0].ChartVersion = "0.1.9"
		d, err := tool.Desired(ctx, newer)
		if err != nil || d.Waiting == "" {
			t.Errorf("got %+v, %v", d, err)
		}
	})
	t.Run("a missing record names the Secret", func(t *testing.T) {
		gone := hr.DeepCopy()
		gone.Status.History[0].Version = 9
		_, err := tool.Desired(ctx, gone)
		if err == nil || !strings.Contains(err.Error(), "shop/sh.helm.release.v1.web.v9") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("a record that holds another release is refused", func(t *testing.T) {
		s := releaseSecret(t, "shop", 4)
		s.Name = SecretName("web", 7)
		create(t, c, s)
		other := hr.DeepCopy()
		other.Status.History[0].Version = 7
		_, err := tool.Desired(ctx, other)
		if err == nil || !strings.Contains(err.Error(), "not web version 7") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("applied by a Kustomization from Git", func(t *testing.T) {
		ks := &kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "apps"},
			Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: 60e9}, Prune: true,
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"}},
			Status: kustomizev1.KustomizationStatus{LastAppliedRevision: "main@sha1:fedcba9876543210fedcba9876543210fedcba98"},
		}
		create(t, c, ks)
		fromRepo := hr.DeepCopy()
		fromRepo.Spec.Chart.Spec.SourceRef = helmv2.CrossNamespaceObjectReference{Kind: sourcev1.HelmRepositoryKind, Name: "charts"}
		fromRepo.Labels = map[string]string{kustomizationNameLabel: "apps", kustomizationNamespaceLabel: "shop"}
		// Labels whoever edits the HelmRelease can set: the Kustomization's
		// inventory does not hold it, so its commit is not the release's.
		d, err := tool.Desired(ctx, fromRepo)
		if err != nil || d.Revision != "" || d.Repository != "" {
			t.Errorf("labels naming a Kustomization that did not apply it: got %q %q, %v; want no commit", d.Repository, d.Revision, err)
		}
		ks.Status.Inventory = &kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{{ID: "shop_" + hr.Name + "_helm.toolkit.fluxcd.io_HelmRelease", Version: "v2"}}}
		if err := c.Status().Update(ctx, ks); err != nil {
			t.Fatal(err)
		}
		d, err = tool.Desired(ctx, fromRepo)
		if err != nil || d.Revision != ks.Status.LastAppliedRevision || d.Repository != "https://git.example.com/o/fleet.git" {
			t.Errorf("got %q %q, %v", d.Repository, d.Revision, err)
		}
		fromRepo.Labels = nil
		d, err = tool.Desired(ctx, fromRepo)
		if err != nil || d.Revision != "" || d.Repository != "" || len(d.Candidates) != 1 || d.Chart != "web@0.2.0" {
			t.Errorf("a chart from a HelmRepository: got %+v, %v", d, err)
		}
	})

	if err := tool.Nudge(ctx, source.Nudge{Source: proposalSource(hr)}); err != nil {
		t.Fatal(err)
	}
	var got helmv2.HelmRelease
	if err := c.Get(ctx, client.ObjectKeyFromObject(hr), &got); err != nil {
		t.Fatal(err)
	}
	a := got.Annotations
	token := a[meta.ReconcileRequestAnnotation]
	if token == "" || a[helmv2.ResetRequestAnnotation] != token || a[helmv2.ForceRequestAnnotation] != token {
		t.Errorf("annotations %v: requestedAt, resetAt and forceAt must carry one token", a)
	}
}

func proposalSource(hr *helmv2.HelmRelease) v1alpha1.Source {
	return v1alpha1.Source{Kind: HelmReleaseKind, Namespace: hr.Namespace, Name: hr.Name}
}
