package rollout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/converge"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/plan"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// target is what one reconcile works towards.
type target struct {
	// sts is the live StatefulSet, or a copy of it carrying a proposal's
	// templates while the live object still has the old ones.
	sts *appsv1.StatefulSet
	src v1alpha1.Source
	// ignoredLabels are template label keys never copied onto claims.
	ignoredLabels []string
	// recreateWith is the proposal the live StatefulSet must first be
	// re-created with (its templates differ); nil when none.
	recreateWith *proposal.Proposal
	// sourceError says the GitOps source cannot be read now.
	sourceError string
	// fromGitOps: the target comes from a GitOps source, not the StatefulSet itself.
	fromGitOps bool
	// authority is the identity every write for the target must be
	// allowed to (Proposal.Authority); nil: the tool applies as itself.
	authority *v1alpha1.Identity
}

// targetOf picks the target of live: the newest GitOps proposal for it, or
// — after a restart, once converged — the proposal its rollout recorded for
// these same templates, or else the StatefulSet itself with the commit its
// annotations name.
func (r *Reconciler) targetOf(live *appsv1.StatefulSet, vcr *v1alpha1.VolumeClaimRollout) target {
	if r.opts.Proposals != nil {
		if p, ok := r.opts.Proposals.Get(types.NamespacedName{Namespace: live.Namespace, Name: live.Name}); ok {
			t := target{sts: live, src: p.Source, ignoredLabels: p.IgnoredLabels, sourceError: p.SourceError, fromGitOps: true, authority: p.Authority}
			if p.StatefulSet != nil && !diff.TemplatesEqual(live.Spec.VolumeClaimTemplates, p.StatefulSet.Spec.VolumeClaimTemplates) {
				t.sts = plan.WithTemplates(live, p.StatefulSet)
				t.recreateWith = &p
			}
			return t
		}
	}
	if rec := vcr.Status.Proposal; rec != nil && rec.Source.Kind != "StatefulSet" && (rec.TemplatesHash == templatesHash(live) || rec.TemplatesHash == legacyTemplatesHash(live)) {
		return target{sts: live, src: recordedSource(rec.Source), ignoredLabels: rec.IgnoredLabels, fromGitOps: true, authority: rec.Authority}
	}
	return target{sts: live, src: r.sourceOf(live)}
}

// recordedSource is a source this controller recorded, perhaps in a version
// that kept the repository's user information.
func recordedSource(src v1alpha1.Source) v1alpha1.Source {
	src.Repository = proposal.RepositoryURL(src.Repository)
	return src
}

// sourceOf is where the StatefulSet's templates came from: the StatefulSet
// itself, with the repository and commit its annotations name where the
// operator allows them (see WorkloadAnnotations).
func (r *Reconciler) sourceOf(sts *appsv1.StatefulSet) v1alpha1.Source {
	src := v1alpha1.Source{Kind: "StatefulSet", Namespace: sts.Namespace, Name: sts.Name}
	if repository, revision, ok := r.workloadAnnotations(sts); ok {
		src.Repository, src.Revision = proposal.RepositoryURL(repository), revision
	}
	return src
}

// convergeRecheck is how soon a reconcile looks again while an orphan
// delete it started is still in progress.
const convergeRecheck = time.Second

// convergeTo re-creates live with the target's templates (Pods kept). When
// the old object is still being deleted it returns Waiting: Resume creates
// the new one on a later reconcile (recreated); while live has not adopted
// its Pods and revisions yet, Adopting: nothing is done, ask again. Once re-created, the
// Converged outcome tells the GitOps tool's sink to apply again, which now
// succeeds.
func (r *Reconciler) convergeTo(ctx context.Context, live *appsv1.StatefulSet, t target) (converge.Progress, error) {
	log := ctrl.LoggerFrom(ctx)
	key := types.NamespacedName{Namespace: live.Namespace, Name: live.Name}
	r.journal.intend(key, &v1alpha1.Proposal{Source: t.src, TemplatesHash: templatesHash(t.sts), IgnoredLabels: t.ignoredLabels, Authority: t.authority})
	progress, err := r.converger.Converge(ctx, live, t.sts)
	r.journal.intend(key, nil)
	if errors.Is(err, converge.ErrRecreatedElsewhere) {
		// The GitOps tool re-created it meanwhile; the next reconcile reads that object.
		log.Info("the StatefulSet was re-created by someone else while claimwarden converged it")
		return progress, nil
	}
	if apierrors.IsConflict(err) {
		// live was read from a cache that lags (often our own re-create
		// just happened): nothing was deleted; read again.
		return progress, err
	}
	if err != nil {
		convergencesTotal.WithLabelValues(r.clusterLabel, t.src.Kind, "failed").Inc()
		r.sinks.Publish(ctx, outcome.Outcome{Action: outcome.ConvergeFailed, StatefulSet: key, UID: live.UID, Labels: live.Labels, Source: t.src, Message: err.Error()})
		return progress, fmt.Errorf("converging StatefulSet %s to %s: %w", key, outcome.Describe(t.src), err)
	}
	switch progress {
	case converge.Waiting:
		log.Info("orphan-deleted the StatefulSet; it is re-created once the delete finished", "source", outcome.Describe(t.src))
		return progress, nil
	case converge.Adopting:
		// A re-create of ours (or anyone's) moments ago: the StatefulSet
		// controller has not adopted the Pods yet (kubernetes#131284).
		return progress, nil
	}
	r.converged(ctx, outcome.Outcome{Action: outcome.Converged, StatefulSet: key, UID: live.UID, Labels: live.Labels, Source: t.src})
	return progress, nil
}

// recreated reports a re-create that Resume completed: Converge left it
// waiting for the orphan delete, or the process restarted. Its source is the
// store's proposal, or else the one the rollout recorded.
func (r *Reconciler) recreated(ctx context.Context, key types.NamespacedName) {
	o := outcome.Outcome{Action: outcome.Converged, StatefulSet: key, Source: v1alpha1.Source{Kind: "StatefulSet", Namespace: key.Namespace, Name: key.Name}}
	var sts appsv1.StatefulSet
	if err := r.client.Get(ctx, key, &sts); err == nil {
		// The cache may not hold the new object yet; the event then has no UID.
		o.UID, o.Labels = sts.UID, sts.Labels
	}
	vcr := &v1alpha1.VolumeClaimRollout{}
	if p, ok := r.proposalFor(key); ok {
		o.Source = p.Source
	} else if err := r.client.Get(ctx, key, vcr); err == nil && vcr.Status.Proposal != nil {
		o.Source = recordedSource(vcr.Status.Proposal.Source)
		r.adoptRecordedProposal(ctx, key, vcr)
	}
	r.converged(ctx, o)
}

// adoptRecordedProposal ties the proposal recorded with the journal (a
// restart emptied the store) to the StatefulSet as the API server created
// it. A record of this release hashed the normalised templates and already
// matches; one a release before normalised hashing wrote hashed the
// proposal's templates as they were, which the server then defaulted, so
// targetOf would not find it by the live templates. Without this the
// rollout would be reported as the StatefulSet's own and its commit never
// get a final status. Best effort: on failure the rollout goes on as the
// StatefulSet's.
func (r *Reconciler) adoptRecordedProposal(ctx context.Context, key types.NamespacedName, vcr *v1alpha1.VolumeClaimRollout) {
	if vcr.Status.Proposal.Source.Kind == "StatefulSet" {
		return
	}
	var sts appsv1.StatefulSet
	if err := r.pods.Get(ctx, key, &sts); err != nil {
		return
	}
	hash := templatesHash(&sts)
	if hash == vcr.Status.Proposal.TemplatesHash {
		return
	}
	patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"proposal":{"templatesHash":"`+hash+`"}}}`))
	if err := r.client.Status().Patch(ctx, vcr, patch, client.FieldOwner(v1alpha1.ControllerName)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "recording the re-created StatefulSet's templates with its proposal")
	}
}

func (r *Reconciler) proposalFor(key types.NamespacedName) (proposal.Proposal, bool) {
	if r.opts.Proposals == nil {
		return proposal.Proposal{}, false
	}
	return r.opts.Proposals.Get(key)
}

// converged counts and publishes a finished convergence.
func (r *Reconciler) converged(ctx context.Context, o outcome.Outcome) {
	convergencesTotal.WithLabelValues(r.clusterLabel, o.Source.Kind, "converged").Inc()
	ctrl.LoggerFrom(ctx).Info("converged the StatefulSet to the proposal", "source", outcome.Describe(o.Source))
	r.sinks.Publish(ctx, o)
}

// setSourceCondition reports whether the GitOps source could be read.
func setSourceCondition(vcr *v1alpha1.VolumeClaimRollout, t target) {
	switch {
	case !t.fromGitOps:
		conditions.Delete(vcr, v1alpha1.SourceReadyCondition)
	case t.sourceError != "":
		conditions.MarkFalse(vcr, v1alpha1.SourceReadyCondition, v1alpha1.ReasonSourceUnavailable, "%s", t.sourceError)
	default:
		conditions.MarkTrue(vcr, v1alpha1.SourceReadyCondition, v1alpha1.ReasonSourceRead, "%s", outcome.Describe(t.src))
	}
}
