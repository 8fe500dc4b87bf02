package helm

import (
	"context"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/reconciler/source"
)

// immutable is helm-controller v1.6.0's Released message for an upgrade the
// API server refused on the claim templates (measured, see testenv.md).
const immutable = `Helm upgrade failed for release shop/web with chart web@0.2.0: server-side apply failed for object shop/web apps/v1, Kind=StatefulSet: StatefulSet.apps "web" is invalid: spec.volumeClaimTemplates: Invalid value: []core.PersistentVolumeClaim{...}: field is immutable`

// failedRelease is a HelmRelease whose newest release (version 4, chart
// web@0.2.0 from a GitRepository) failed with message.
func failedRelease(message string) *helmv2.HelmRelease {
	now := metav1.Now()
	hr := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Generation: 2},
		Spec: helmv2.HelmReleaseSpec{Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
			Chart: "./chart", SourceRef: helmv2.CrossNamespaceObjectReference{Kind: sourcev1.GitRepositoryKind, Name: "fleet"},
		}}},
		Status: helmv2.HelmReleaseStatus{
			History: helmv2.Snapshots{
				{Name: "web", Namespace: "shop", Version: 4, Status: "failed", ChartName: "web", ChartVersion: "0.2.0", Digest: "sha256:4"},
				{Name: "web", Namespace: "shop", Version: 3, Status: "deployed", ChartName: "web", ChartVersion: "0.1.0", Digest: "sha256:3"},
			},
			Conditions: []metav1.Condition{
				{Type: meta.ReadyCondition, Status: metav1.ConditionFalse, Reason: helmv2.UpgradeFailedReason, Message: message, ObservedGeneration: 2},
				{Type: helmv2.ReleasedCondition, Status: metav1.ConditionFalse, Reason: helmv2.UpgradeFailedReason, Message: message, ObservedGeneration: 2},
			},
		},
	}
	// What the API server requires of a status.
	for _, s := range hr.Status.History {
		s.FirstDeployed, s.LastDeployed = now, now
	}
	for i := range hr.Status.Conditions {
		hr.Status.Conditions[i].LastTransitionTime = now
	}
	return hr
}

func read(t *testing.T, hr *helmv2.HelmRelease) source.Reading {
	t.Helper()
	r, err := (&HelmReleases{}).Read(context.Background(), hr)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func reasons(r source.Reading) string {
	var out []string
	for _, n := range r.Notes {
		out = append(out, n.Reason)
	}
	return strings.Join(out, ",")
}

func TestReadBlockedOnTemplates(t *testing.T) {
	r := read(t, failedRelease(immutable))
	if r.State != source.Blocked || r.Revision != "web@0.2.0" || r.Key != "web.v4/sha256:4/2" || len(r.Notes) != 0 {
		t.Errorf("got %+v", r)
	}
	t.Run("older servers' Forbidden message", func(t *testing.T) {
		r := read(t, failedRelease(`Helm upgrade failed: StatefulSet.apps "web" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'template' are forbidden`))
		if r.State != source.Blocked {
			t.Errorf("got %+v", r)
		}
	})
	t.Run("a retry is another release, read again", func(t *testing.T) {
		hr := failedRelease(immutable)
		hr.Status.History[0].Version, hr.Status.History[0].Digest = 5, "sha256:5"
		if k := read(t, hr).Key; k == r.Key {
			t.Errorf("same key %s", k)
		}
	})
}

func TestReadOtherStates(t *testing.T) {
	for _, c := range []struct {
		name   string
		edit   func(*helmv2.HelmRelease)
		want   source.State
		reason string
	}{
		{"another failure is not claimwarden's", func(hr *helmv2.HelmRelease) {
			hr.Status.Conditions[1].Message = "Helm upgrade failed: context deadline exceeded"
		}, source.Idle, ""},
		{"ready at its generation", func(hr *helmv2.HelmRelease) {
			hr.Status.Conditions[0].Status = metav1.ConditionTrue
			hr.Status.History[0].Status = "deployed"
		}, source.Idle, ""},
		{"suspended", func(hr *helmv2.HelmRelease) { hr.Spec.Suspend = true }, source.Skipped, ReasonSuspended},
		{"rolled back by remediation", func(hr *helmv2.HelmRelease) {
			// The rollback is release 5, at the old chart; 4 failed.
			hr.Status.History = append(helmv2.Snapshots{{Name: "web", Namespace: "shop", Version: 5, Status: "deployed", ChartName: "web", ChartVersion: "0.1.0"}}, hr.Status.History...)
			hr.Status.Conditions = append(hr.Status.Conditions, metav1.Condition{Type: helmv2.RemediatedCondition, Status: metav1.ConditionTrue, Reason: helmv2.RollbackSucceededReason, Message: "Helm rollback to previous release shop/web.v3 with chart web@0.1.0 succeeded"})
		}, source.Skipped, ReasonRemediated},
		{"uninstalled by remediation", func(hr *helmv2.HelmRelease) {
			hr.Status.History[0].Status = "uninstalled"
			hr.Status.Conditions = append(hr.Status.Conditions, metav1.Condition{Type: helmv2.RemediatedCondition, Status: metav1.ConditionTrue, Reason: helmv2.UninstallSucceededReason, Message: "Helm uninstall succeeded"})
		}, source.Skipped, ReasonRemediated},
		{"upgrade in progress", func(hr *helmv2.HelmRelease) { hr.Status.History[0].Status = "pending-upgrade" }, source.Waiting, ""},
		{"never released", func(hr *helmv2.HelmRelease) { hr.Status.History = nil }, source.Waiting, ""},
		{"upgrade.force replaces the Pods too", func(hr *helmv2.HelmRelease) { hr.Spec.Upgrade = &helmv2.Upgrade{Force: true} }, source.Blocked, ReasonForce},
		{"a chart from a HelmRepository names no commit", func(hr *helmv2.HelmRelease) {
			hr.Spec.Chart.Spec.SourceRef = helmv2.CrossNamespaceObjectReference{Kind: sourcev1.HelmRepositoryKind, Name: "charts"}
		}, source.Blocked, ReasonNoCommit},
		{"a Kustomization from Git applied it", func(hr *helmv2.HelmRelease) {
			hr.Spec.Chart.Spec.SourceRef = helmv2.CrossNamespaceObjectReference{Kind: sourcev1.HelmRepositoryKind, Name: "charts"}
			hr.Labels = map[string]string{kustomizationNameLabel: "apps", kustomizationNamespaceLabel: "flux-system"}
		}, source.Blocked, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			hr := failedRelease(immutable)
			c.edit(hr)
			r := read(t, hr)
			if r.State != c.want || reasons(r) != c.reason {
				t.Errorf("state %v notes %q, want %v %q (%+v)", r.State, reasons(r), c.want, c.reason, r.Notes)
			}
		})
	}
}
