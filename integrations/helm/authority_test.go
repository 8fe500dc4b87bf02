package helm

import (
	"context"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ownedStatefulSet(ns, release, releaseNamespace string, labels map[string]string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db", Labels: labels,
		Annotations: map[string]string{annotationReleaseName: release, annotationReleaseNamespace: releaseNamespace}}}
}

func releaseRecord(ns, name, version string) *metav1.PartialObjectMetadata {
	m := NewReleaseSecret()
	m.Namespace, m.Name = ns, "sh.helm.release.v1."+name+".v"+version
	m.Labels = map[string]string{labelOwner: ownerHelm, labelName: name, labelVersion: version, labelStatus: "failed"}
	return m
}

// TestCLIReleaseManagesItsNamespaceOnly: a record in tenant-a reaches only
// tenant-a's StatefulSets that Helm's annotations give to that release, and
// none helm-controller made; what the record itself says is not asked.
func TestCLIReleaseManagesItsNamespaceOnly(t *testing.T) {
	rec := releaseRecord("tenant-a", "shop", "2")
	for _, c := range []struct {
		name string
		live *appsv1.StatefulSet
		why  string
	}{
		{"its own", ownedStatefulSet("tenant-a", "shop", "tenant-a", nil), ""},
		{"another namespace's release of the same name", ownedStatefulSet("platform", "shop", "platform", nil), "recorded in namespace tenant-a"},
		{"another namespace, annotated as the tenant's", ownedStatefulSet("platform", "shop", "tenant-a", nil), "recorded in namespace tenant-a"},
		{"another release", ownedStatefulSet("tenant-a", "billing", "tenant-a", nil), "does not carry"},
		{"a HelmRelease's", ownedStatefulSet("tenant-a", "shop", "tenant-a", map[string]string{HelmReleaseNameLabel: "shop"}), "Flux HelmRelease"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := (&CLIReleases{}).Manages(context.Background(), rec, c.live)
			switch {
			case c.why == "" && err != nil:
				t.Errorf("Manages = %v, want managed", err)
			case c.why != "" && (err == nil || !strings.Contains(err.Error(), c.why)):
				t.Errorf("Manages = %v, want a refusal saying %q", err, c.why)
			}
		})
	}
}

// TestARecordNamedForAnotherIsNone: a Secret whose name is not the one
// Helm's driver gives its labels would make claimwarden read another
// Secret; it is no release record, and manages nothing.
func TestARecordNamedForAnotherIsNone(t *testing.T) {
	rec := releaseRecord("tenant-a", "shop", "2")
	rec.Name = "sh.helm.release.v1.shop.v3"
	if _, ok := labelsOf(rec); ok {
		t.Error("a Secret named for version 3 with labels of version 2 read as a record")
	}
	err := (&CLIReleases{}).Manages(context.Background(), rec, ownedStatefulSet("tenant-a", "shop", "tenant-a", nil))
	if err == nil || !strings.Contains(err.Error(), "not a Helm release record") {
		t.Errorf("Manages = %v, want refused", err)
	}
}

func tenantHelmRelease() *helmv2.HelmRelease {
	return &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "shop"}}
}

func TestHelmReleaseManagesWhatHelmControllerLabelled(t *testing.T) {
	mine := map[string]string{HelmReleaseNameLabel: "shop", HelmReleaseNamespaceLabel: "tenant-a"}
	for _, c := range []struct {
		name string
		live *appsv1.StatefulSet
		why  string
	}{
		{"its own", ownedStatefulSet("tenant-a", "shop", "tenant-a", mine), ""},
		{"another namespace's release of the same name", ownedStatefulSet("platform", "shop", "platform", map[string]string{HelmReleaseNameLabel: "shop", HelmReleaseNamespaceLabel: "platform"}), "does not carry"},
		{"the CLI's release", ownedStatefulSet("tenant-a", "shop", "tenant-a", nil), "do not name HelmRelease"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := (&HelmReleases{}).Manages(context.Background(), tenantHelmRelease(), c.live)
			switch {
			case c.why == "" && err != nil:
				t.Errorf("Manages = %v, want managed", err)
			case c.why != "" && (err == nil || !strings.Contains(err.Error(), c.why)):
				t.Errorf("Manages = %v, want a refusal saying %q", err, c.why)
			}
		})
	}
}

func TestHelmReleaseAuthorityAndLockdown(t *testing.T) {
	hr := tenantHelmRelease()
	id, err := (&HelmReleases{DefaultServiceAccount: "default"}).Authority(context.Background(), hr)
	if err != nil || id == nil || id.User != "system:serviceaccount:tenant-a:default" {
		t.Errorf("authority %+v, %v; want tenant-a's default service account", id, err)
	}
	hr.Spec.ServiceAccountName = "deployer"
	if id, _ := (&HelmReleases{}).Authority(context.Background(), hr); id == nil || id.User != "system:serviceaccount:tenant-a:deployer" {
		t.Errorf("authority %+v, want tenant-a's deployer", id)
	}
	hr.Spec.Chart = &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{SourceRef: helmv2.CrossNamespaceObjectReference{Kind: "GitRepository", Name: "charts", Namespace: "platform"}}}
	if err := crossNamespaceRefused(hr, true); err == nil || !strings.Contains(err.Error(), "namespace platform") {
		t.Errorf("a chart from platform under the lockdown: %v, want refused", err)
	}
	if err := crossNamespaceRefused(hr, false); err != nil {
		t.Errorf("without the lockdown: %v", err)
	}
}
