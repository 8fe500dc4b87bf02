package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

const (
	oldSHA = "5f20822c6285aaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	newSHA = "db7292d2b116bbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	// immutableMessage is helm-controller's failed upgrade, as v1.6.0 writes it.
	immutableMessage = `Helm upgrade failed for release demo/demo-db with chart db@0.2.0+db7292d2b116: server-side apply failed for object demo/db apps/v1, Kind=StatefulSet: StatefulSet.apps "db" is invalid: spec.volumeClaimTemplates: Invalid value: []core.PersistentVolumeClaim{}: field is immutable`
)

// helmRelease is the story's HelmRelease with Ready status, reason and
// message, and its history newest first.
func helmRelease(status metav1.ConditionStatus, reason, msg string, history ...*helmv2.Snapshot) *helmv2.HelmRelease {
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: fluxNamespace, Name: helmReleaseName, Generation: 1}}
	hr.Status.Conditions = []metav1.Condition{{Type: meta.ReadyCondition, Status: status, Reason: reason, Message: msg, ObservedGeneration: 1}}
	hr.Status.History = history
	return hr
}

func snapshot(version int, chartVersion, status string) *helmv2.Snapshot {
	return &helmv2.Snapshot{Name: "demo-db", Namespace: namespace, Version: version, ChartName: "db", ChartVersion: chartVersion, Status: status}
}

// nudged is hr with claimwarden's request to upgrade again, made at token.
func nudged(hr *helmv2.HelmRelease, token string) *helmv2.HelmRelease {
	hr.Annotations = map[string]string{helmv2.ResetRequestAnnotation: token}
	hr.ManagedFields = []metav1.ManagedFieldsEntry{{
		Manager:  v1alpha1.ControllerName,
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:` + helmv2.ResetRequestAnnotation + `":{}}}}`),
	}}
	return hr
}

// The HelmRelease's versions after a chart bump, as helm-controller wrote
// them in a demo run: the timeline prints each outcome once, not the state
// before the push nor the half statuses (Ready written before the history),
// and marks the failure on the templates, the nudge and the upgrade.
func TestHelmShow(t *testing.T) {
	var buf bytes.Buffer
	began := time.Now().Add(-time.Second)
	tl := &timeline{out: &printer{w: &buf}, tool: helmTool{}, began: began, sha: newSHA}
	v1 := snapshot(1, "0.1.0+"+oldSHA[:12], releaseDeployed)
	v2 := snapshot(2, "0.2.0+"+newSHA[:12], releaseFailed)
	v3 := snapshot(3, "0.2.0+"+newSHA[:12], releaseDeployed)
	earlier := began.Add(-time.Minute).UTC().Format(time.RFC3339Nano)
	token := time.Now().UTC().Format(time.RFC3339Nano)
	for i, step := range []struct {
		hr      *helmv2.HelmRelease
		printed string
		failed  bool
		applied bool
	}{
		{hr: nudged(helmRelease(metav1.ConditionTrue, helmv2.InstallSucceededReason, "Helm install succeeded", v1), earlier)},
		{hr: helmRelease(metav1.ConditionUnknown, meta.ProgressingReason, "Running 'upgrade' action with timeout of 1m0s", v1), printed: "Ready=Unknown"},
		{hr: helmRelease(metav1.ConditionFalse, helmv2.UpgradeFailedReason, immutableMessage, v1)},
		{hr: helmRelease(metav1.ConditionFalse, helmv2.UpgradeFailedReason, immutableMessage, v2, v1), printed: "Invalid value: [...]: field is immutable", failed: true},
		{hr: nudged(helmRelease(metav1.ConditionFalse, helmv2.UpgradeFailedReason, immutableMessage, v2, v1), token), printed: "claimwarden asks helm-controller to upgrade again", failed: true},
		{hr: helmRelease(metav1.ConditionTrue, helmv2.UpgradeSucceededReason, "Helm upgrade succeeded", v2, v1), failed: true},
		{hr: helmRelease(metav1.ConditionTrue, helmv2.UpgradeSucceededReason, "Helm upgrade succeeded", v3, v2, v1), printed: "demo-db.v3 db@0.2.0+db7292d2b116 deployed", failed: true, applied: true},
	} {
		buf.Reset()
		helmTool{}.show(tl, step.hr)
		if got := buf.String(); (step.printed == "") != (got == "") || !strings.Contains(got, step.printed) {
			t.Errorf("version %d: printed %q, want a line with %q", i, got, step.printed)
		}
		if (tl.failed > 0) != step.failed || (tl.applied > 0) != step.applied {
			t.Errorf("version %d: failed at %s, applied at %s; want failed %t, applied %t", i, tl.failed, tl.applied, step.failed, step.applied)
		}
	}
	if tl.released != "db@0.2.0+"+newSHA[:12] || tl.nudged != token {
		t.Errorf("released %q, nudged %q; want db@0.2.0+%s and %s", tl.released, tl.nudged, newSHA[:12], token)
	}
	if got := (helmTool{}).verdict(tl); got != "failed, then upgraded when claimwarden asked" {
		t.Errorf("verdict %q", got)
	}
}

// The nudge counts only when claimwarden's field manager wrote it.
func TestUpgradeRequest(t *testing.T) {
	hr := nudged(helmRelease(metav1.ConditionFalse, helmv2.UpgradeFailedReason, immutableMessage), "2026-12-02T12:00:00Z")
	if got := upgradeRequest(hr); got != "2026-12-02T12:00:00Z" {
		t.Errorf("claimwarden's request: %q", got)
	}
	hr.ManagedFields[0].Manager = "flux"
	if got := upgradeRequest(hr); got != "" {
		t.Errorf("the flux CLI's request taken for claimwarden's: %q", got)
	}
}
