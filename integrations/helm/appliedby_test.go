package helm

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/source"
)

// A tenant's StatefulSet whose labels and annotations name another team's
// HelmRelease is not that HelmRelease's (source.Registry.AppliedBy, which
// autoresize asks of a StatefulSet at rest): its release record must hold
// the StatefulSet, in the StatefulSet's namespace. The error names no
// repository of the other team. The platform's own StatefulSet, which the
// record holds, is the HelmRelease's. On a real API server with Flux's
// CRDs.
func TestAppliedByAtRestIsConfirmedByTheRelease(t *testing.T) {
	c := kube(t)
	ctx := context.Background()
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: "platform", Name: "db"},
		Spec: helmv2.HelmReleaseSpec{Interval: metav1.Duration{Duration: time.Minute}, Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
			Chart: "./charts/db", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: sourcev1.GitRepositoryKind, Name: "platform"}}}}}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "platform"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant-b"}},
		&sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: "platform", Name: "platform"},
			Spec: sourcev1.GitRepositorySpec{URL: "https://git.example.com/platform/fleet.git", Interval: metav1.Duration{Duration: time.Minute}}},
		hr,
		releaseWith(t, "platform", "db", 1, "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec: {serviceName: db, selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}, spec: {containers: [{name: db, image: db}]}}}\n"),
	} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	now := metav1.Now()
	hr.Status.History = helmv2.Snapshots{{Name: "db", Namespace: "platform", Version: 1, Status: "deployed", ChartName: "db", ChartVersion: "1.0.0",
		Digest: "sha256:1", FirstDeployed: now, LastDeployed: now}}
	if err := c.Status().Update(ctx, hr); err != nil {
		t.Fatal(err)
	}
	var tools source.Registry
	tools.Know(&HelmReleases{Reader: c})
	// named is a StatefulSet that names platform's HelmRelease db as
	// helm-controller's labels and Helm's annotations would.
	named := func(ns string) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db",
			Labels:      map[string]string{HelmReleaseNameLabel: "db", HelmReleaseNamespaceLabel: "platform"},
			Annotations: map[string]string{"meta.helm.sh/release-name": "db", "meta.helm.sh/release-namespace": "platform"}}}
	}

	_, ok, err := tools.AppliedBy(ctx, c, "", named("tenant-b"))
	if want := "it names HelmRelease platform/db, which does not apply it: HelmRelease platform/db releases into namespace platform, not tenant-b"; !ok || err == nil || err.Error() != want {
		t.Errorf("the tenant's StatefulSet: %v, %v; want %q", ok, err, want)
	}
	if err != nil && strings.Contains(err.Error(), "git.example.com") {
		t.Errorf("the tenant's status names the platform's repository: %v", err)
	}
	src, ok, err := tools.AppliedBy(ctx, c, "", named("platform"))
	if !ok || err != nil || src.Source.Kind != helmv2.HelmReleaseKind || src.Source.Namespace != "platform" || src.Source.Name != "db" {
		t.Errorf("the platform's StatefulSet: %+v, %v; want HelmRelease platform/db", src.Source, err)
	}
}

// releaseWith is version of release name in ns, its manifest manifest,
// as Helm's Secrets driver stores it: JSON, gzip, base64.
func releaseWith(t *testing.T, ns, name string, version int, manifest string) *corev1.Secret {
	t.Helper()
	js, err := json.Marshal(&rspb.Release{Name: name, Namespace: ns, Version: version, Manifest: manifest, Info: &rspb.Info{Status: rcommon.StatusDeployed}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(js); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: SecretName(name, version), Labels: map[string]string{"owner": "helm", "name": name}},
		Type: "helm.sh/release.v1", Data: map[string][]byte{"release": []byte(base64.StdEncoding.EncodeToString(buf.Bytes()))}}
}
