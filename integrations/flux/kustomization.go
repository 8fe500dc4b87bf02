package flux

import (
	"context"
	"fmt"
	"sync"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// KustomizationKind is the Source kind of proposals from Flux.
const KustomizationKind = kustomizev1.KustomizationKind

// Event reasons on Kustomizations.
const (
	ReasonSuspended       = "ClaimwardenSuspended"
	ReasonForce           = "ClaimwardenForceReplaces"
	ReasonBuildFailed     = "ClaimwardenBuildFailed"
	ReasonProposed        = "ClaimwardenProposed"
	ReasonNothingProposed = "ClaimwardenNothingToDo"
)

// ArtifactBuilder fetches a Kustomization's artifact and builds it (*Builder).
type ArtifactBuilder interface {
	Build(ctx context.Context, ks *kustomizev1.Kustomization, a *meta.Artifact) (*Result, error)
}

// KustomizationReconciler turns failed Flux applies into proposals: when a
// Kustomization's newest revision is not applied, it builds that revision
// the way kustomize-controller does and proposes every StatefulSet whose
// volumeClaimTemplates differ from the live object's.
type KustomizationReconciler struct {
	Client client.Client
	// Reader reads sources and StatefulSets uncached: sources are read once
	// per revision (no informer needed), StatefulSets must be current.
	Reader    client.Reader
	Builder   ArtifactBuilder
	Proposals *proposal.Store
	Recorder  events.EventRecorder
	// FieldOwner writes the reconcile request annotation.
	FieldOwner string

	// done holds, per Kustomization, the revision and generation last
	// turned into proposals, so nothing is fetched twice for them.
	done sync.Map
	// said keeps the events said once (suspended, force, nothing to do).
	said proposal.Said
}

// Reconcile runs the phases for one Kustomization: skip what Flux applied or
// what is suspended; read the source; build; propose; drop proposals for
// StatefulSets gone from the build.
func (r *KustomizationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	owner := proposal.Owner{Kind: KustomizationKind, Namespace: req.Namespace, Name: req.Name}

	var ks kustomizev1.Kustomization
	if err := r.Client.Get(ctx, req.NamespacedName, &ks); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(ctx, owner, req.NamespacedName)
			r.said.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ks.Spec.Suspend {
		// A suspended Kustomization applies nothing, so nothing it proposed may be acted on.
		r.forget(ctx, owner, req.NamespacedName)
		r.sayOnce(&ks, log, corev1.EventTypeNormal, ReasonSuspended, "the Kustomization is suspended: claimwarden does nothing for it until it is resumed")
		return ctrl.Result{}, nil
	}
	if ks.Spec.Force {
		// Flux re-creates what it cannot patch itself, with a cascading delete:
		// the Pods go with the StatefulSet. claimwarden still grows the claims
		// of the object Flux creates, but cannot spare the Pods.
		r.sayOnce(&ks, log, corev1.EventTypeWarning, ReasonForce,
			"spec.force is true: Flux deletes and re-creates a StatefulSet whose volumeClaimTemplates change, and its Pods with it; set force: false to let claimwarden converge it with its Pods kept")
	}
	attempted := ks.Status.LastAttemptedRevision
	if attempted == "" || attempted == ks.Status.LastAppliedRevision {
		// Flux applied its newest revision: nothing is blocked, and a
		// proposal never converged (denied, then reverted in Git) is stale.
		return ctrl.Result{}, r.Proposals.DropUnconverged(ctx, r.Reader, owner, nil)
	}
	doneKey := fmt.Sprintf("%s/%d", attempted, ks.Generation)
	if last, ok := r.done.Load(req.NamespacedName); ok && last == doneKey {
		return ctrl.Result{}, nil
	}

	src, err := sourceOf(ctx, r.Reader, &ks)
	if err != nil {
		return ctrl.Result{}, r.sourceFailed(ctx, &ks, owner, err)
	}
	art := src.GetArtifact()
	if art == nil || art.Revision != attempted {
		// The source moved on (or has nothing yet); Flux attempts the newest
		// artifact next, and that attempt brings the Kustomization back here.
		log.V(1).Info("waiting for Flux to attempt the source's artifact", "attempted", attempted)
		return ctrl.Result{}, nil
	}
	res, err := r.Builder.Build(ctx, &ks, art)
	if err != nil {
		return ctrl.Result{}, r.sourceFailed(ctx, &ks, owner, err)
	}
	r.Proposals.SetSourceError(ctx, owner, "")

	stss, _, err := manifests.StatefulSets(manifests.FromUnstructured(res.Objects, "Kustomization "+req.String()+" at "+attempted))
	if err != nil {
		return ctrl.Result{}, r.sourceFailed(ctx, &ks, owner, fmt.Errorf("kustomization %s/%s at %s: %w", ks.Namespace, ks.Name, attempted, err))
	}
	repository, revision := provenance(src, art)
	source := v1alpha1.Source{Kind: KustomizationKind, Namespace: ks.Namespace, Name: ks.Name, Repository: repository, Revision: revision}
	inBuild, proposedNow := map[types.NamespacedName]bool{}, map[types.NamespacedName]bool{}
	var proposed []string
	for _, built := range stss {
		sts := built.StatefulSet
		key := types.NamespacedName{Namespace: sts.Namespace, Name: sts.Name}
		inBuild[key] = true
		var live appsv1.StatefulSet
		if err := r.Reader.Get(ctx, key, &live); err != nil {
			if apierrors.IsNotFound(err) {
				continue // Flux creates it; a new StatefulSet needs no convergence
			}
			return ctrl.Result{}, fmt.Errorf("reading StatefulSet %s of Kustomization %s/%s: %w", key, ks.Namespace, ks.Name, err)
		}
		if diff.TemplatesEqual(live.Spec.VolumeClaimTemplates, sts.Spec.VolumeClaimTemplates) {
			continue // not what blocks Flux
		}
		r.Proposals.Set(ctx, proposal.Proposal{
			StatefulSet:   sts,
			Source:        source,
			IgnoredLabels: res.TemplateLabelKeys,
			Reapply: func(ctx context.Context) error {
				return RequestReconcile(ctx, r.Client, req.NamespacedName, r.FieldOwner)
			},
		})
		proposedNow[key] = true
		proposed = append(proposed, key.String())
	}
	for _, key := range r.Proposals.Owned(owner) {
		if !inBuild[key] {
			// Removed from Git: Flux prunes it or leaves it; either way it is not ours to converge.
			r.Proposals.Delete(ctx, owner, key)
		}
	}
	// A converged earlier proposal still names its commit; one never
	// converged (say, denied, then reverted in Git) is no longer asked for.
	if err := r.Proposals.DropUnconverged(ctx, r.Reader, owner, proposedNow); err != nil {
		return ctrl.Result{}, err
	}
	r.done.Store(req.NamespacedName, doneKey)
	if len(proposed) > 0 {
		r.Recorder.Eventf(&ks, nil, corev1.EventTypeNormal, ReasonProposed, "Propose",
			"revision %s changes the volumeClaimTemplates of %v: claimwarden evaluates and converges them", attempted, proposed)
		log.Info("proposed StatefulSets from a revision Flux could not apply", "revision", attempted, "statefulSets", proposed)
	} else {
		r.sayOnce(&ks, log, corev1.EventTypeNormal, ReasonNothingProposed,
			fmt.Sprintf("revision %s changes no StatefulSet's volumeClaimTemplates: its failure is not one claimwarden can resolve", attempted))
	}
	return ctrl.Result{}, nil
}

// sourceFailed reports a source that cannot be fetched or built on the
// rollouts it proposed for, and returns err so that the controller retries
// with back-off.
func (r *KustomizationReconciler) sourceFailed(ctx context.Context, ks *kustomizev1.Kustomization, owner proposal.Owner, err error) error {
	r.Proposals.SetSourceError(ctx, owner, err.Error())
	r.Recorder.Eventf(ks, nil, corev1.EventTypeWarning, ReasonBuildFailed, "Build", "%s", err.Error())
	return err
}

// forget drops what a Kustomization proposed and what was done for it.
func (r *KustomizationReconciler) forget(ctx context.Context, owner proposal.Owner, key types.NamespacedName) {
	for _, k := range r.Proposals.Owned(owner) {
		r.Proposals.Delete(ctx, owner, k)
	}
	r.done.Delete(key)
}

func (r *KustomizationReconciler) sayOnce(ks *kustomizev1.Kustomization, log logr.Logger, eventType, reason, msg string) {
	if !r.said.Once(types.NamespacedName{Namespace: ks.Namespace, Name: ks.Name}, reason, msg) {
		return
	}
	r.Recorder.Eventf(ks, nil, eventType, reason, "Skip", "%s", msg)
	log.Info(msg)
}
