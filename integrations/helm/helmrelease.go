package helm

import (
	"context"
	"errors"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/integrations/toolkit"
	"github.com/claimwarden/claimwarden/reconciler/converge"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// HelmReleaseKind is the Source kind of proposals from Flux HelmReleases.
const HelmReleaseKind = helmv2.HelmReleaseKind

// Event reasons on HelmReleases.
const (
	ReasonSuspended  = "ClaimwardenSuspended"
	ReasonForce      = "ClaimwardenForceReplaces"
	ReasonRemediated = "ClaimwardenRemediated"
	ReasonNoCommit   = "ClaimwardenNoCommit"
	ReasonReadFailed = "ClaimwardenReleaseReadFailed"
	// ReasonRemoteCluster: a HelmRelease with spec.kubeConfig is skipped.
	ReasonRemoteCluster = "ClaimwardenRemoteCluster"
)

// HelmReleases is Flux's helm-controller as a source.Tool: when a
// HelmRelease's newest release failed on immutable volumeClaimTemplates, its
// desired StatefulSets are read from that failed release's record; the nudge
// asks helm-controller to upgrade again with its failure counts reset.
type HelmReleases struct {
	// Client writes the nudge's annotations.
	Client client.Client
	// Reader reads release Secrets, charts and sources uncached: each is
	// read once per failed release, and a cache would watch every Secret.
	Reader client.Reader
	// MaxReleaseBytes bounds one release record unpacked; default
	// DefaultMaxReleaseBytes.
	MaxReleaseBytes int64
	// FieldOwner writes the nudge's annotations.
	FieldOwner string
	// DefaultServiceAccount and NoCrossNamespaceRefs mirror
	// helm-controller's lockdown flags (WatchOptions).
	DefaultServiceAccount string
	NoCrossNamespaceRefs  bool
	// Clusters are the spokes a spec.kubeConfig may name (WatchOptions).
	Clusters []toolkit.Cluster
}

var _ source.Tool = (*HelmReleases)(nil)

// Kind implements source.Tool.
func (*HelmReleases) Kind() string { return HelmReleaseKind }

// NewObject implements source.Tool.
func (*HelmReleases) NewObject() client.Object { return &helmv2.HelmRelease{} }

// Read implements source.Tool. A suspended HelmRelease is skipped, and so is
// one whose failed release was remediated (rolled back or uninstalled):
// converging toward a release Helm rolled back would leave the cluster ahead
// of the release Helm records as deployed, and its next upgrade would then
// fail on the templates the other way round. One Ready at its generation is
// idle. One whose newest release failed on immutable volumeClaimTemplates is
// blocked at that release; any other failure is not claimwarden's to solve.
// A blocked one releasing to a cluster that is not a listed spoke
// (spec.kubeConfig, remote) is skipped.
func (h *HelmReleases) Read(ctx context.Context, obj client.Object) (source.Reading, error) {
	hr := obj.(*helmv2.HelmRelease)
	if hr.Spec.Suspend {
		return source.Reading{State: source.Skipped, Notes: []source.Note{{Type: corev1.EventTypeNormal, Reason: ReasonSuspended,
			Message: "the HelmRelease is suspended: claimwarden does nothing for it until it is resumed"}}}, nil
	}
	var notes []source.Note
	if hr.Spec.Upgrade != nil && hr.Spec.Upgrade.Force {
		// Helm replaces what it cannot patch, deleting the StatefulSet with
		// its Pods; claimwarden can grow the claims of the new one, no more.
		notes = append(notes, source.Note{Type: corev1.EventTypeWarning, Reason: ReasonForce,
			Message: "spec.upgrade.force is true: Helm deletes and re-creates a StatefulSet whose volumeClaimTemplates change, and its Pods with it; set force: false to let claimwarden converge it with its Pods kept"})
	}
	if ready := conditions.Get(hr, meta.ReadyCondition); ready != nil && ready.Status == "True" && ready.ObservedGeneration == hr.Generation {
		return source.Reading{State: source.Idle, Notes: notes}, nil
	}
	latest := hr.Status.History.Latest()
	if latest == nil {
		return source.Reading{State: source.Waiting, Notes: notes}, nil
	}
	revision := latest.ChartName + "@" + latest.ChartVersion
	if latest.Status != rcommon.StatusFailed.String() {
		if conditions.IsTrue(hr, helmv2.RemediatedCondition) {
			return source.Reading{State: source.Skipped, Notes: append(notes, source.Note{Type: corev1.EventTypeNormal, Reason: ReasonRemediated,
				Message: fmt.Sprintf("helm-controller remediated the failed release (%s): claimwarden does not converge toward a release Helm rolled back or uninstalled; it acts on the next failed upgrade (reconcile.fluxcd.io/resetAt asks for one)", conditions.GetMessage(hr, helmv2.RemediatedCondition))})}, nil
		}
		return source.Reading{State: source.Waiting, Notes: notes}, nil
	}
	if !failedOnTemplates(hr) {
		return source.Reading{State: source.Idle, Notes: notes}, nil
	}
	if _, err := h.remote(ctx, hr); err != nil {
		return source.Reading{State: source.Skipped, Notes: []source.Note{{Type: corev1.EventTypeNormal, Reason: ReasonRemoteCluster,
			Message: fmt.Sprintf("claimwarden leaves the HelmRelease alone: %v", err)}}}, nil
	}
	if n, ok := noCommitNote(hr, revision); ok {
		notes = append(notes, n)
	}
	return source.Reading{
		State:    source.Blocked,
		Revision: revision,
		// A new release (a retry, a newer chart, other values) is read again.
		Key:   fmt.Sprintf("%s.v%d/%s/%d", latest.Name, latest.Version, latest.Digest, hr.Generation),
		Notes: notes,
	}, nil
}

// failedOnTemplates reports whether helm-controller's last release failed
// with the API server's refusal to change volumeClaimTemplates, e.g.
// `Helm upgrade failed for release NS/NAME with chart web@0.2.0: server-side
// apply failed for object …: StatefulSet.apps "web" is invalid:
// spec.volumeClaimTemplates: Invalid value: […]: field is immutable`.
func failedOnTemplates(hr *helmv2.HelmRelease) bool {
	c := conditions.Get(hr, helmv2.ReleasedCondition)
	if c == nil || c.Status != "False" {
		return false
	}
	return converge.IsImmutableTemplateError(errors.New(c.Message))
}

// Desired implements source.Tool: the StatefulSets of the failed release's
// record, as helm-controller tried to apply them.
func (h *HelmReleases) Desired(ctx context.Context, obj client.Object) (source.Desired, error) {
	hr := obj.(*helmv2.HelmRelease)
	latest := hr.Status.History.Latest()
	if latest == nil || latest.Status != rcommon.StatusFailed.String() {
		return source.Desired{Waiting: "waiting for helm-controller's next release"}, nil
	}
	if err := crossNamespaceRefused(hr, h.NoCrossNamespaceRefs); err != nil {
		return source.Desired{}, readFailed(err)
	}
	chart := latest.ChartName + "@" + latest.ChartVersion
	remote, err := h.remote(ctx, hr)
	if err != nil {
		return source.Desired{}, readFailed(err)
	}
	rel, err := h.record(ctx, h.recordsOf(remote), hr, latest)
	if err != nil {
		return source.Desired{}, readFailed(err)
	}
	if rel.Status != rcommon.StatusFailed {
		// Helm moved on (a rollback, a newer attempt) since the status was
		// written; the HelmRelease's next status brings it back here.
		return source.Desired{Waiting: "the release record is no longer the failed release"}, nil
	}
	stss, err := StatefulSets(rel)
	if err != nil {
		return source.Desired{}, readFailed(fmt.Errorf("HelmRelease %s/%s at %s: %w", hr.Namespace, hr.Name, chart, err))
	}
	prov, err := provenanceOf(ctx, h.Reader, hr, latest.ChartVersion)
	if err != nil {
		return source.Desired{}, readFailed(err)
	}
	if prov.waiting != "" {
		return source.Desired{Waiting: prov.waiting}, nil
	}
	return source.Desired{
		Cluster:     remote.Cluster,
		Repository:  prov.repository,
		Revision:    prov.revision,
		Chart:       chart,
		Revisions:   []string{latest.ChartVersion},
		Candidates:  stss,
		NothingToDo: fmt.Sprintf("release %s.v%d (chart %s) renders no StatefulSet whose volumeClaimTemplates change: its failure is not one claimwarden can resolve", latest.Name, latest.Version, chart),
	}, nil
}

// record is the record of hr's release latest, read with records from
// hr's storage namespace; it must be of the release namespace: manifest objects without
// a namespace go to the record's, which must be the one helm-controller
// releases into.
func (h *HelmReleases) record(ctx context.Context, records client.Reader, hr *helmv2.HelmRelease, latest *helmv2.Snapshot) (*Release, error) {
	limit := h.MaxReleaseBytes
	if limit <= 0 {
		limit = DefaultMaxReleaseBytes
	}
	chart := latest.ChartName + "@" + latest.ChartVersion
	rel, err := ReadRelease(ctx, records, hr.GetStorageNamespace(), latest.Name, latest.Version, limit)
	if err != nil {
		return nil, fmt.Errorf("HelmRelease %s/%s at %s: %w", hr.Namespace, hr.Name, chart, err)
	}
	if ns := hr.GetReleaseNamespace(); rel.Namespace != ns {
		return nil, fmt.Errorf("HelmRelease %s/%s at %s: the release record's namespace %q is not the release namespace %q", hr.Namespace, hr.Name, chart, rel.Namespace, ns)
	}
	return rel, nil
}

// Nudge implements source.Tool: helm-controller upgrades again now, with its
// failure counts reset, and the upgrade succeeds. The Nudger asks once per
// failed release, however many StatefulSets it converged: each request is a
// forced upgrade, a release version of its own.
func (h *HelmReleases) Nudge(ctx context.Context, n source.Nudge) error {
	return RequestUpgrade(ctx, h.Client, types.NamespacedName{Namespace: n.Source.Namespace, Name: n.Source.Name}, h.FieldOwner)
}

func readFailed(err error) error {
	return &source.ReadError{Reason: ReasonReadFailed, Action: "ReadRelease", Err: err}
}

// remote is the listed spoke hr releases to (spec.kubeConfig), the zero
// Remote for this cluster.
func (h *HelmReleases) remote(ctx context.Context, hr *helmv2.HelmRelease) (toolkit.Remote, error) {
	if hr.Spec.KubeConfig == nil {
		return toolkit.Remote{}, nil
	}
	return toolkit.KubeConfig(ctx, h.Reader, "the HelmRelease "+hr.Namespace+"/"+hr.Name, hr.Namespace, hr.Spec.KubeConfig, h.Clusters)
}

// recordsOf reads the release records of remote: helm-controller keeps
// them on the cluster it releases to.
func (h *HelmReleases) recordsOf(remote toolkit.Remote) client.Reader {
	if remote.Reader != nil {
		return remote.Reader
	}
	return h.Reader
}
