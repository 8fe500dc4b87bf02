package helm

import (
	"context"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/claimwarden/claimwarden/integrations/toolkit"
	"github.com/claimwarden/claimwarden/reconciler/source"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// A HelmRelease releasing to a listed spoke (spec.kubeConfig) is read
// there: its failed release's record is the spoke's, not this cluster's;
// one naming a cluster nobody listed is left alone, saying so; at rest it
// applies what the spoke's record holds there, nothing of this cluster.
func TestRemoteHelmRelease(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, helmv2.AddToScheme, sourcev1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	secret := func(name, server string) client.Object {
		s, err := fixtures.KubeconfigSecret("shop", name, server, []byte("eu CA"), &clientcmdapi.AuthInfo{Token: "tenant-token"})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	chart := &sourcev1.HelmChart{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "shop-web"},
		Spec: sourcev1.HelmChartSpec{Chart: "./chart", SourceRef: sourcev1.LocalHelmChartSourceReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"}},
		Status: sourcev1.HelmChartStatus{ObservedSourceArtifactRevision: commit,
			Artifact: &meta.Artifact{Revision: "0.2.0", Path: "p", URL: "http://x/p", Digest: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", LastUpdateTime: metav1.Now()}}}
	repo := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "fleet"}, Spec: sourcev1.GitRepositorySpec{URL: "https://git.example.com/o/fleet.git"}}
	hub := fake.NewClientBuilder().WithScheme(scheme).WithObjects(secret("eu", "https://eu.example:6443"), secret("elsewhere", "https://other.example:6443"), chart, repo).Build()
	spoke := fake.NewClientBuilder().WithScheme(scheme).WithObjects(releaseSecret(t, "shop", 4)).Build()
	h := &HelmReleases{Reader: hub, Clusters: []toolkit.Cluster{{Name: "eu", Server: "https://eu.example:6443", CAData: []byte("eu CA"), Reader: spoke}}}
	ctx := context.Background()
	remote := func(secret string) *helmv2.HelmRelease {
		hr := failedRelease(immutable)
		hr.Status.HelmChart = "shop/shop-web"
		hr.Spec.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: secret}}
		return hr
	}

	hr := remote("eu")
	if r, err := h.Read(ctx, hr); err != nil || r.State != source.Blocked {
		t.Fatalf("reading %+v, %v: want blocked", r, err)
	}
	d, err := h.Desired(ctx, hr)
	if err != nil {
		t.Fatal(err)
	}
	if d.Cluster != "eu" || len(d.Candidates) != 1 || d.Candidates[0].Name != "web" {
		t.Errorf("desired %+v: want web, read from the spoke's record, in cluster eu", d)
	}

	r, err := h.Read(ctx, remote("elsewhere"))
	if err != nil || r.State != source.Skipped || len(r.Notes) != 1 || r.Notes[0].Reason != ReasonRemoteCluster ||
		!strings.Contains(r.Notes[0].Message, "cluster https://other.example:6443 (spec.kubeConfig, Secret shop/elsewhere), which is not one claimwarden is configured for") {
		t.Errorf("reading %+v, %v: want skipped, naming the cluster nobody listed", r, err)
	}

	live := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web",
		Labels:      map[string]string{HelmReleaseNameLabel: hr.Name, HelmReleaseNamespaceLabel: hr.Namespace},
		Annotations: map[string]string{annotationReleaseName: hr.GetReleaseName(), annotationReleaseNamespace: hr.GetReleaseNamespace()}}}
	err = h.ManagesAtRest(ctx, hr, "", live)
	if want := "the HelmRelease shop/web applies to cluster eu (spec.kubeConfig), not the cluster claimwarden runs in"; err == nil || err.Error() != want {
		t.Errorf("at rest in this cluster: %v, want %q: its objects are the spoke's", err, want)
	}
	if err := h.ManagesAtRest(ctx, hr, "eu", live); err != nil {
		t.Errorf("at rest in the spoke: %v, want managed (the spoke's release record holds it)", err)
	}
}
