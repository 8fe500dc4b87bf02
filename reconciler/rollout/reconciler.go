// Package rollout is the rollout controller: for every managed StatefulSet it
// brings the PersistentVolumeClaims to the volumeClaimTemplates the way
// KEP-4650 specifies, and reports progress in a VolumeClaimRollout.
package rollout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/converge"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/plan"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// Reconciler reconciles one StatefulSet's claims per request.
type Reconciler struct {
	client    client.Client
	recorder  events.EventRecorder
	opts      Options
	converger *converge.Converger
	// retry paces attempts after the API server rejected a patch.
	retry workqueue.TypedRateLimiter[types.NamespacedName]
	// rejected remembers, per StatefulSet, the last rejected patch so that
	// unrelated events do not repeat it before its back-off ends.
	rejected sync.Map
	// skipped holds the StatefulSets already logged as not ours, so each is logged once.
	skipped *sync.Map
	// verdicts caches policy decisions (see gate.go).
	verdicts verdictCache
	// statusWarned and statusSeeded hold, per revision and per status
	// target, that a missing commit was logged and that the reporter was
	// told what a previous process posted.
	statusWarned, statusSeeded sync.Map
	// said remembers, per StatefulSet, the last block or completion an event
	// announced and the last revision finalised as superseded: the rollout
	// read from the cache can lag behind the status this controller just
	// wrote, so "the condition changed" alone would say either twice.
	said proposal.Said
	// reported holds, per StatefulSet, what its rollout last reported
	// (source and commit status state), for supersede.
	reported sync.Map
}

// rejection is a patch the API server refused, and what must change to try at once.
type rejection struct {
	claim, pvcVersion string
	generation        int64
	message           string
	notBefore         time.Time
}

// Reconcile runs the phases of one rollout: finish an interrupted re-create,
// load the StatefulSet, diff its claims, plan, patch, report.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	log := ctrl.LoggerFrom(ctx)

	resumed, err := r.converger.Resume(ctx, req.NamespacedName)
	if errors.Is(err, converge.ErrJournalRejected) {
		// Not retried: only a person can tell what the record should be.
		return ctrl.Result{}, r.journalRejected(ctx, req.NamespacedName, err)
	}
	if errors.Is(err, converge.ErrRecreatedElsewhere) {
		log.Info("the StatefulSet was re-created by someone else while claimwarden converged it; continuing with that object")
		err = nil
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("finishing the re-create of StatefulSet %s: %w", req.NamespacedName, err)
	}
	switch resumed {
	case converge.Waiting:
		// The orphan delete is still in progress: look again soon rather
		// than hold this worker until the garbage collector is done.
		return ctrl.Result{RequeueAfter: convergeRecheck}, nil
	case converge.Recreated:
		r.finishedConvergence(ctx, req.NamespacedName)
	}

	var sts appsv1.StatefulSet
	if err := r.client.Get(ctx, req.NamespacedName, &sts); err != nil {
		if apierrors.IsNotFound(err) {
			forgetMetrics(req.NamespacedName)
			r.said.Forget(req.NamespacedName)
			r.reported.Delete(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !sts.DeletionTimestamp.IsZero() || !r.inScope(&sts) {
		return ctrl.Result{}, nil
	}
	if why := plan.SkipReason(&sts); why != "" {
		if _, logged := r.skipped.LoadOrStore(req.NamespacedName, true); !logged {
			log.Info("not managing this StatefulSet", "reason", why)
		}
		forgetMetrics(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	r.skipped.Delete(req.NamespacedName)

	vcr, err := r.rolloutFor(ctx, &sts)
	if err != nil {
		return ctrl.Result{}, err
	}
	before := vcr.DeepCopy()
	defer func() {
		recordMetrics(req.NamespacedName, vcr.Status.Claims, conditions.IsStalled(vcr))
		if err := r.writeRollout(ctx, before, vcr); err != nil && !apierrors.IsNotFound(err) {
			retErr = kerrors.NewAggregate([]error{retErr, fmt.Errorf("writing VolumeClaimRollout %s: %w", req.NamespacedName, err)})
		}
	}()
	if err := r.adopt(&sts, vcr); err != nil {
		return ctrl.Result{}, err
	}

	strategy, err := plan.StrategyOf(&sts, r.opts.Strategy)
	if err != nil {
		r.stall(&sts, vcr, v1alpha1.ReasonInvalidAnnotation, err.Error())
		return ctrl.Result{}, nil
	}

	d := r.desiredOf(&sts, vcr)
	r.supersede(ctx, &sts, before, d.src)
	setSourceCondition(vcr, d)

	var pvcs corev1.PersistentVolumeClaimList
	if err := r.client.List(ctx, &pvcs, client.InNamespace(sts.Namespace)); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing claims of StatefulSet %s: %w", req.NamespacedName, err)
	}
	in := diff.Input{Desired: d.sts, PVCs: pvcs.Items, IgnoreLabels: d.ignoredLabels, MaxClaims: r.opts.MaxClaimsPerStatefulSet}
	if d.pending != nil {
		in.LiveTemplates = diff.LiveTemplatesOf(&sts)
	}
	res, err := diff.Compute(in)
	if err != nil {
		// Bad templates wait for the StatefulSet to change; retrying cannot help.
		r.stall(&sts, vcr, v1alpha1.ReasonInvalidTemplate, err.Error())
		return ctrl.Result{}, nil
	}
	byName := make(map[string]*corev1.PersistentVolumeClaim, len(pvcs.Items))
	for i := range pvcs.Items {
		byName[pvcs.Items[i].Name] = &pvcs.Items[i]
	}
	verdict, err := r.gate(ctx, d.sts, res, byName, policies.Source(d.src), d.pending != nil)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := plan.Build(res, plan.Options{Strategy: strategy, MaxConcurrent: r.opts.MaxConcurrentPatches, PolicyDenied: verdict.claims})
	if verdict.statefulSet != "" {
		hold(&p, "waiting: the StatefulSet change is denied by policy")
		p.Blocked = strings.TrimPrefix(p.Blocked+"; denied by policy: "+verdict.statefulSet, "; ")
	}
	converging := false
	if d.pending != nil {
		// No claim is patched before the StatefulSet carries the templates:
		// a denied proposal must leave every claim as it is.
		hold(&p, "waiting: the StatefulSet is re-created with the proposed templates first")
		if !verdict.denied() {
			progress, err := r.convergeTo(ctx, &sts, vcr, d)
			if apierrors.IsConflict(err) {
				return ctrl.Result{RequeueAfter: time.Second}, nil
			}
			if err != nil {
				return ctrl.Result{}, err
			}
			converging = progress == converge.Waiting
		}
	}

	out := r.patchClaims(ctx, &sts, byName, p.Patch, d.ignoredLabels)
	r.report(d.sts, vcr, d.src, d.ignoredLabels, strategy, res, p, verdict, out)
	r.reportCommitStatus(ctx, &sts, vcr)
	if converging {
		// Resume, at the top of the next reconcile, creates the object.
		return ctrl.Result{RequeueAfter: convergeRecheck}, nil
	}

	if out.rejected != nil {
		return ctrl.Result{RequeueAfter: time.Until(out.rejected.notBefore)}, nil
	}
	r.retry.Forget(req.NamespacedName)
	if verdict.denied() {
		// Ask again once the denials expire (see verdictCache).
		return ctrl.Result{RequeueAfter: r.opts.PolicyRecheck}, nil
	}
	return ctrl.Result{}, nil
}

// hold keeps the plan's patches back: each claim it would patch now waits,
// saying why, so that the rollout does not look in progress.
func hold(p *plan.Plan, why string) {
	p.Patch = nil
	for i := range p.Steps {
		if p.Steps[i].Phase == v1alpha1.ClaimPatching {
			p.Steps[i].Phase, p.Steps[i].Message = v1alpha1.ClaimPending, why
		}
	}
}

// sourceOf is where the StatefulSet's templates came from: the StatefulSet
// itself, with the repository and commit its annotations name.
func sourceOf(sts *appsv1.StatefulSet) v1alpha1.Source {
	return v1alpha1.Source{
		Kind: "StatefulSet", Namespace: sts.Namespace, Name: sts.Name,
		Repository: proposal.RepositoryURL(sts.Annotations[v1alpha1.RepositoryAnnotation]),
		Revision:   sts.Annotations[v1alpha1.RevisionAnnotation],
	}
}

// rolloutFor returns the StatefulSet's VolumeClaimRollout, creating it when missing.
func (r *Reconciler) rolloutFor(ctx context.Context, sts *appsv1.StatefulSet) (*v1alpha1.VolumeClaimRollout, error) {
	vcr := &v1alpha1.VolumeClaimRollout{}
	err := r.client.Get(ctx, client.ObjectKeyFromObject(sts), vcr)
	if err == nil || !apierrors.IsNotFound(err) {
		return vcr, err
	}
	vcr = &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: sts.Namespace, Name: sts.Name}}
	if err := controllerutil.SetOwnerReference(sts, vcr, r.client.Scheme()); err != nil {
		return nil, err
	}
	if err := r.client.Create(ctx, vcr, client.FieldOwner(FieldOwner)); err != nil {
		return nil, fmt.Errorf("creating VolumeClaimRollout %s/%s: %w", sts.Namespace, sts.Name, err)
	}
	return vcr, nil
}

// adopt points the rollout's owner reference at the current StatefulSet: an
// orphan delete (ours or a user's) strips it, and a re-created StatefulSet has a new UID.
func (r *Reconciler) adopt(sts *appsv1.StatefulSet, vcr *v1alpha1.VolumeClaimRollout) error {
	refs := vcr.OwnerReferences[:0]
	for _, ref := range vcr.OwnerReferences {
		if ref.Kind != "StatefulSet" || ref.UID == sts.UID {
			refs = append(refs, ref)
		}
	}
	vcr.OwnerReferences = refs
	return controllerutil.SetOwnerReference(sts, vcr, r.client.Scheme())
}

// writeRollout writes what the reconcile changed: metadata (the owner
// reference) and the status, each only when it differs, the status in ONE
// merge patch. fluxcd/pkg/runtime's patch helper writes conditions and the
// rest of the status in two requests, so watchers (kstatus readers such as
// Flux health checks among them) would briefly see Ready=True beside the
// previous claims; every condition here is ours, so nothing is lost by
// patching them together.
func (r *Reconciler) writeRollout(ctx context.Context, before, after *v1alpha1.VolumeClaimRollout) error {
	if !equality.Semantic.DeepEqual(before.ObjectMeta, after.ObjectMeta) {
		// Each patch carries only its part: the base of the metadata patch
		// has our status, that of the status patch the server's metadata.
		base := before.DeepCopy()
		base.Status = after.Status
		status := after.Status.DeepCopy()
		if err := r.client.Patch(ctx, after, client.MergeFrom(base), client.FieldOwner(FieldOwner)); err != nil {
			return err
		}
		// The response overwrote after, status included: keep ours.
		after.Status = *status
		before = before.DeepCopy()
		before.ObjectMeta = *after.ObjectMeta.DeepCopy()
	}
	if equality.Semantic.DeepEqual(before.Status, after.Status) {
		return nil
	}
	return r.client.Status().Patch(ctx, after, client.MergeFrom(before), client.FieldOwner(FieldOwner))
}
