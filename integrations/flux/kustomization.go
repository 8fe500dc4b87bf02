package flux

import (
	"context"
	"fmt"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/integrations/toolkit"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// KustomizationKind is the Source kind of proposals from Flux.
const KustomizationKind = kustomizev1.KustomizationKind

// Event reasons on Kustomizations.
const (
	ReasonSuspended       = "ClaimwardenSuspended"
	ReasonForce           = "ClaimwardenForceReplaces"
	ReasonBuildFailed     = "ClaimwardenBuildFailed"
	ReasonRemoteCluster   = "ClaimwardenRemoteCluster"
	ReasonProposed        = source.ReasonProposed
	ReasonNothingProposed = source.ReasonNothingToDo
)

// ArtifactBuilder fetches a Kustomization's artifact and builds it (*Builder).
type ArtifactBuilder interface {
	Build(ctx context.Context, ks *kustomizev1.Kustomization, a *meta.Artifact) (*Result, error)
}

// Kustomizations is Flux as a source.Tool: when a Kustomization's newest
// revision is not applied, its desired StatefulSets are that revision built
// the way kustomize-controller builds it; the nudge is a reconcile request.
type Kustomizations struct {
	// Client writes the reconcile request annotation.
	Client client.Client
	// Reader reads sources uncached: they are read once per revision, no
	// informer is needed.
	Reader  client.Reader
	Builder ArtifactBuilder
	// FieldOwner writes the reconcile request annotation.
	FieldOwner string
	// DefaultServiceAccount mirrors kustomize-controller's
	// --default-service-account (WatchOptions).
	DefaultServiceAccount string
	// NoCrossNamespaceRefs mirrors kustomize-controller's
	// --no-cross-namespace-refs (WatchOptions).
	NoCrossNamespaceRefs bool
	// Clusters are the spokes a spec.kubeConfig may name (WatchOptions).
	Clusters []toolkit.Cluster
}

var _ source.Tool = (*Kustomizations)(nil)

// Kind implements source.Tool.
func (*Kustomizations) Kind() string { return KustomizationKind }

// NewObject implements source.Tool.
func (*Kustomizations) NewObject() client.Object { return &kustomizev1.Kustomization{} }

// Read implements source.Tool: a suspended Kustomization is skipped, and
// so is a blocked one applying to a cluster that is not a listed spoke
// (spec.kubeConfig, remote); one whose newest revision Flux applied is
// idle; otherwise the revision it attempts, at its generation, blocks.
func (k *Kustomizations) Read(ctx context.Context, obj client.Object) (source.Reading, error) {
	ks := obj.(*kustomizev1.Kustomization)
	if ks.Spec.Suspend {
		return source.Reading{State: source.Skipped, Notes: []source.Note{{Type: corev1.EventTypeNormal, Reason: ReasonSuspended,
			Message: "the Kustomization is suspended: claimwarden does nothing for it until it is resumed"}}}, nil
	}
	var notes []source.Note
	if ks.Spec.Force {
		// Flux re-creates what it cannot patch itself, with a cascading delete:
		// the Pods go with the StatefulSet. claimwarden still grows the claims
		// of the object Flux creates, but cannot spare the Pods.
		notes = append(notes, source.Note{Type: corev1.EventTypeWarning, Reason: ReasonForce,
			Message: "spec.force is true: Flux deletes and re-creates a StatefulSet whose volumeClaimTemplates change, and its Pods with it; set force: false to let claimwarden converge it with its Pods kept"})
	}
	attempted := ks.Status.LastAttemptedRevision
	if attempted == "" || attempted == ks.Status.LastAppliedRevision {
		return source.Reading{State: source.Idle, Notes: notes}, nil
	}
	if _, err := k.remote(ctx, ks); err != nil {
		return source.Reading{State: source.Skipped, Notes: []source.Note{{Type: corev1.EventTypeNormal, Reason: ReasonRemoteCluster,
			Message: fmt.Sprintf("claimwarden leaves the Kustomization alone: %v", err)}}}, nil
	}
	return source.Reading{State: source.Blocked, Revision: attempted, Key: fmt.Sprintf("%s/%d", attempted, ks.Generation), Notes: notes}, nil
}

// remote is the listed spoke ks applies to (spec.kubeConfig), the zero
// Remote for this cluster.
func (k *Kustomizations) remote(ctx context.Context, ks *kustomizev1.Kustomization) (toolkit.Remote, error) {
	if ks.Spec.KubeConfig == nil {
		return toolkit.Remote{}, nil
	}
	return toolkit.KubeConfig(ctx, k.Reader, "the Kustomization "+ks.Namespace+"/"+ks.Name, ks.Namespace, ks.Spec.KubeConfig, k.Clusters)
}

// Desired implements source.Tool: the attempted revision's artifact, built.
func (k *Kustomizations) Desired(ctx context.Context, obj client.Object) (source.Desired, error) {
	ks := obj.(*kustomizev1.Kustomization)
	attempted := ks.Status.LastAttemptedRevision
	if err := toolkit.CrossNamespaceRefused(ks.Namespace, ks.Spec.SourceRef.Namespace, k.NoCrossNamespaceRefs); err != nil {
		return source.Desired{}, buildFailed(fmt.Errorf("kustomization %s/%s: spec.sourceRef names %w", ks.Namespace, ks.Name, err))
	}
	remote, err := k.remote(ctx, ks)
	if err != nil {
		return source.Desired{}, buildFailed(err)
	}
	src, err := sourceOf(ctx, k.Reader, ks)
	if err != nil {
		return source.Desired{}, buildFailed(err)
	}
	art := src.GetArtifact()
	if art == nil || art.Revision != attempted {
		// The source moved on (or has nothing yet); Flux attempts the newest
		// artifact next, and that attempt brings the Kustomization back here.
		return source.Desired{Waiting: "waiting for Flux to attempt the source's artifact"}, nil
	}
	res, err := k.Builder.Build(ctx, ks, art)
	if err != nil {
		return source.Desired{}, buildFailed(err)
	}
	stss, _, err := manifests.StatefulSets(manifests.FromUnstructured(res.Objects, "Kustomization "+ks.Namespace+"/"+ks.Name+" at "+attempted))
	if err != nil {
		return source.Desired{}, buildFailed(fmt.Errorf("kustomization %s/%s at %s: %w", ks.Namespace, ks.Name, attempted, err))
	}
	repository, revision := provenance(src, art)
	d := source.Desired{
		Cluster:       remote.Cluster,
		Repository:    repository,
		Revision:      revision,
		Revisions:     []string{attempted},
		IgnoredLabels: res.TemplateLabelKeys,
	}
	if conditions.IsFalse(ks, meta.ReadyCondition) {
		// kustomize-controller records the attempted revision before it
		// applies it, Ready Unknown until the apply ends: read then (to
		// start before Flux fails), a revision that changes no template
		// has not failed, and there is nothing to say.
		d.NothingToDo = fmt.Sprintf("revision %s changes no StatefulSet's volumeClaimTemplates: its failure is not one claimwarden can resolve", attempted)
	}
	for _, built := range stss {
		d.Candidates = append(d.Candidates, built.StatefulSet)
	}
	return d, nil
}

// Nudge implements source.Tool: kustomize-controller reconciles the
// Kustomization now, and its apply succeeds.
func (k *Kustomizations) Nudge(ctx context.Context, n source.Nudge) error {
	return RequestReconcile(ctx, k.Client, types.NamespacedName{Namespace: n.Source.Namespace, Name: n.Source.Name}, k.FieldOwner)
}

func buildFailed(err error) error {
	return &source.ReadError{Reason: ReasonBuildFailed, Action: "Build", Err: err}
}
