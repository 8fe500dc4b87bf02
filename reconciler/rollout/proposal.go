package rollout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/gitstatus"
	"github.com/claimwarden/claimwarden/reconciler/converge"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/plan"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// desired is what one reconcile works towards.
type desired struct {
	// sts is the live StatefulSet, or a copy of it carrying a proposal's
	// templates while the live object still has the old ones.
	sts *appsv1.StatefulSet
	src v1alpha1.Source
	// ignoredLabels are template label keys never copied onto claims.
	ignoredLabels []string
	// pending is the proposal the live StatefulSet must first be converged to; nil when none.
	pending *proposal.Proposal
	// sourceError says the source of the proposal cannot be read now.
	sourceError string
	gitops      bool
}

// desiredOf picks the desired state of live: the newest GitOps proposal for
// it, or — after a restart, once converged — the proposal its rollout
// recorded for these same templates, or else the StatefulSet itself with the
// commit its annotations name.
func (r *Reconciler) desiredOf(live *appsv1.StatefulSet, vcr *v1alpha1.VolumeClaimRollout) desired {
	if r.opts.Proposals != nil {
		if p, ok := r.opts.Proposals.Get(types.NamespacedName{Namespace: live.Namespace, Name: live.Name}); ok {
			d := desired{sts: live, src: p.Source, ignoredLabels: p.IgnoredLabels, sourceError: p.SourceError, gitops: true}
			if p.StatefulSet != nil && !diff.TemplatesEqual(live.Spec.VolumeClaimTemplates, p.StatefulSet.Spec.VolumeClaimTemplates) {
				d.sts = plan.WithTemplates(live, p.StatefulSet)
				d.pending = &p
			}
			return d
		}
	}
	if rec := vcr.Status.Proposal; rec != nil && rec.Source.Kind != "StatefulSet" && rec.TemplatesHash == templatesHash(live) {
		// Written by this controller, but perhaps by a version that kept
		// user information.
		src := rec.Source
		src.Repository = proposal.RepositoryURL(src.Repository)
		return desired{sts: live, src: src, ignoredLabels: rec.IgnoredLabels, gitops: true}
	}
	return desired{sts: live, src: sourceOf(live)}
}

// convergeRecheck is how soon a reconcile looks again while an orphan delete
// it started is still in progress.
const convergeRecheck = time.Second

// convergeTo re-creates live with the proposal's templates (Pods kept), then
// asks the GitOps tool to apply again, which now succeeds. When the old object
// is still being deleted it returns Waiting: Resume creates the new one on a
// later reconcile, and finishedConvergence then does the rest.
func (r *Reconciler) convergeTo(ctx context.Context, live *appsv1.StatefulSet, vcr *v1alpha1.VolumeClaimRollout, d desired) (converge.Progress, error) {
	log := ctrl.LoggerFrom(ctx)
	progress, err := r.converger.Converge(ctx, live, d.sts)
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
		convergencesTotal.WithLabelValues(d.src.Kind, "failed").Inc()
		r.recorder.Eventf(live, vcr, corev1.EventTypeWarning, v1alpha1.ReasonConvergeFailed, "Converge",
			"re-creating StatefulSet %s/%s with the templates of %s: %s", live.Namespace, live.Name, describeSource(d.src), err)
		return progress, fmt.Errorf("converging StatefulSet %s/%s to %s: %w", live.Namespace, live.Name, describeSource(d.src), err)
	}
	if progress == converge.Waiting {
		log.Info("orphan-deleted the StatefulSet; it is re-created once the delete finished", "source", describeSource(d.src))
		return progress, nil
	}
	r.converged(ctx, live, vcr, d.src, d.pending.Reapply)
	return progress, nil
}

// finishedConvergence does what convergeTo does after a re-create, for one
// that Resume completed: Converge had to leave it waiting for the orphan
// delete (or the process restarted). The proposal is the store's, or else
// the one the rollout recorded.
func (r *Reconciler) finishedConvergence(ctx context.Context, key types.NamespacedName) {
	vcr := &v1alpha1.VolumeClaimRollout{}
	if err := r.client.Get(ctx, key, vcr); err != nil {
		ctrl.LoggerFrom(ctx).Info("finished re-creating the StatefulSet; its VolumeClaimRollout is not readable", "error", err.Error())
		return
	}
	src := v1alpha1.Source{Kind: "StatefulSet", Namespace: key.Namespace, Name: key.Name}
	var reapply func(context.Context) error
	if p, ok := r.proposalFor(key); ok {
		src, reapply = p.Source, p.Reapply
	} else if vcr.Status.Proposal != nil {
		src = vcr.Status.Proposal.Source
	}
	r.converged(ctx, vcr, nil, src, reapply)
}

func (r *Reconciler) proposalFor(key types.NamespacedName) (proposal.Proposal, bool) {
	if r.opts.Proposals == nil {
		return proposal.Proposal{}, false
	}
	return r.opts.Proposals.Get(key)
}

// converged counts and announces a finished convergence and asks the GitOps
// tool to apply again.
func (r *Reconciler) converged(ctx context.Context, regarding, related runtime.Object, src v1alpha1.Source, reapply func(context.Context) error) {
	log := ctrl.LoggerFrom(ctx)
	convergencesTotal.WithLabelValues(src.Kind, "converged").Inc()
	r.recorder.Eventf(regarding, related, corev1.EventTypeNormal, v1alpha1.ReasonConverged, "Converge",
		"re-created with the volumeClaimTemplates of %s; Pods kept", describeSource(src))
	log.Info("converged the StatefulSet to the proposal", "source", describeSource(src))
	if reapply != nil {
		if err := reapply(ctx); err != nil {
			// Flux retries on its own interval; Argo CD's Reapply keeps
			// trying itself. Either way nothing is lost by waiting.
			log.Error(err, "asking the GitOps tool to apply again", "source", describeSource(src))
		}
	}
}

// supersede finalises the commit status of the previous proposal when a newer
// revision replaced it before its rollout finished: that commit was never
// fully rolled out and never will be.
func (r *Reconciler) supersede(ctx context.Context, sts *appsv1.StatefulSet, before *v1alpha1.VolumeClaimRollout, src v1alpha1.Source) {
	key := types.NamespacedName{Namespace: sts.Namespace, Name: sts.Name}
	// What this process last reported; the rollout read from the cache can
	// be older than that. After a restart, the rollout is all there is.
	var prev reported
	if last, ok := r.reported.Load(key); ok {
		prev = last.(reported)
	} else if p := before.Status.Proposal; p != nil && conditions.Get(before, meta.ReadyCondition) != nil {
		prev.src = p.Source
		prev.state, _ = commitStatusOf(before)
	}
	if prev.src.Revision == "" || prev.src.Revision == src.Revision || src.Revision == "" || prev.state != gitstatus.Pending {
		return
	}
	// Said once per StatefulSet and revision (see Reconciler.said).
	if !r.said.Once(key, v1alpha1.ReasonSuperseded, prev.src.Revision) {
		return
	}
	msg := "superseded by " + proposal.ShortRevision(src.Revision) + " before its rollout finished"
	r.recorder.Eventf(sts, before, corev1.EventTypeNormal, v1alpha1.ReasonSuperseded, "Supersede", "revision %s %s", prev.src.Revision, msg)
	t, ok := r.statusTarget(ctx, sts, prev.src)
	if !ok {
		return
	}
	r.opts.CommitStatuses.Report(t, gitstatus.Status{State: gitstatus.Error, Context: t.Context, Description: gitstatus.TruncateDescription(msg), TargetURL: r.opts.StatusTargetURL})
}

// setSourceCondition reports whether the GitOps source could be read.
func setSourceCondition(vcr *v1alpha1.VolumeClaimRollout, d desired) {
	switch {
	case !d.gitops:
		conditions.Delete(vcr, v1alpha1.SourceReadyCondition)
	case d.sourceError != "":
		conditions.MarkFalse(vcr, v1alpha1.SourceReadyCondition, v1alpha1.ReasonSourceUnavailable, "%s", d.sourceError)
	default:
		conditions.MarkTrue(vcr, v1alpha1.SourceReadyCondition, v1alpha1.ReasonSourceRead, "%s", describeSource(d.src))
	}
}

// describeSource renders "Kustomization flux-system/apps at main@sha1:…".
func describeSource(s v1alpha1.Source) string {
	out := s.Kind + " " + s.Name
	if s.Namespace != "" {
		out = s.Kind + " " + s.Namespace + "/" + s.Name
	}
	if s.Revision != "" {
		out += " at " + s.Revision
	}
	return out
}
