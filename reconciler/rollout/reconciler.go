// Package rollout is the rollout controller: for every managed StatefulSet it
// brings the PersistentVolumeClaims to the volumeClaimTemplates the way
// KEP-4650 specifies, reports progress in a VolumeClaimRollout, and publishes
// an outcome.Outcome for the sinks.
package rollout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/assess"
	"github.com/claimwarden/claimwarden/reconciler/converge"
	"github.com/claimwarden/claimwarden/reconciler/gate"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// Reconciler reconciles one StatefulSet's claims per request.
type Reconciler struct {
	client client.Client
	// clusterLabel is the cluster label of the rollout's metrics
	// (Options.ClusterName, or the manager's own cluster's).
	clusterLabel string
	// writer applies the claim patches (Options.Writer).
	writer    *Writer
	events    outcome.Recorder
	sinks     outcome.Sinks
	opts      Options
	converger *converge.Converger
	// journal is the converger's, told which proposal a re-create is for.
	journal *rolloutJournal
	// retry paces attempts after the API server rejected a patch.
	retry workqueue.TypedRateLimiter[types.NamespacedName]
	// restartRetry paces evictions a PodDisruptionBudget refused.
	restartRetry workqueue.TypedRateLimiter[types.NamespacedName]
	// pods reads the Pods being restarted, uncached: the Pod cache holds
	// their metadata only.
	pods client.Reader
	// podCache holds the metadata of StatefulSets' Pods (newPodCache).
	podCache client.Reader
	// memory holds per-StatefulSet state between reconciles; see memory.
	memory memory
	// index finds a StatefulSet's claims and a claim's StatefulSets.
	index *indexes
	// verdicts caches policy decisions (see gate.Cache).
	verdicts *gate.Cache
	// reserved is what the proposals in flight still have to grow.
	reserved reservations
	// claimUpdates says whether Kubernetes updates a StatefulSet's
	// claims itself (KEP-4650).
	claimUpdates *claimUpdates
	// server says what the API server supports of what claim changes need.
	server *serverSupport
}

// Reconcile runs the phases of one rollout: finish an interrupted re-create,
// load the StatefulSet and its rollout, then roll (diff, gate, plan,
// converge, patch, report) and write the rollout.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	key := req.NamespacedName
	if r.opts.Shard != nil {
		// Before the journal too: another instance's re-create is its own.
		mine, err := r.opts.Shard(ctx, key)
		if err != nil || !mine {
			ctrl.LoggerFrom(ctx).V(1).Info("another claimwarden instance's StatefulSet (sharding): left alone", "error", err)
			return ctrl.Result{}, err
		}
	}
	if res, err, stop := r.finishRecreate(ctx, key); stop {
		return res, err
	}
	sts, err := r.managed(ctx, key)
	if sts == nil || err != nil {
		return ctrl.Result{}, err
	}
	vcr, err := r.rolloutFor(ctx, sts)
	if err != nil {
		return ctrl.Result{}, err
	}
	before := vcr.DeepCopy()
	defer func() {
		recordMetrics(r.clusterLabel, key, vcr.Status.Claims, conditions.IsStalled(vcr))
		if err := r.writeRollout(ctx, before, vcr); err != nil && !apierrors.IsNotFound(err) {
			retErr = kerrors.NewAggregate([]error{retErr, fmt.Errorf("writing VolumeClaimRollout %s: %w", key, err)})
		}
	}()
	if err := r.adopt(sts, vcr); err != nil {
		return ctrl.Result{}, err
	}
	return r.roll(ctx, sts, before, vcr)
}

// finishRecreate completes a re-create an earlier reconcile (or process)
// started; stop says the reconcile ends here with res and err.
func (r *Reconciler) finishRecreate(ctx context.Context, key types.NamespacedName) (res ctrl.Result, err error, stop bool) {
	log := ctrl.LoggerFrom(ctx)
	progress, err := r.converger.Resume(ctx, key)
	switch {
	case errors.Is(err, converge.ErrJournalRejected):
		// Not retried: only a person can tell what the record should be.
		return ctrl.Result{}, r.journalRejected(ctx, key, err), true
	case errors.Is(err, converge.ErrRecreatedElsewhere):
		log.Info("the StatefulSet was re-created by someone else while claimwarden converged it; continuing with that object")
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("finishing the re-create of StatefulSet %s: %w", key, err), true
	case progress == converge.Waiting:
		// The orphan delete is still in progress: look again soon (the
		// delete event may come first) rather than hold this worker until
		// the garbage collector is done.
		log.V(1).Info("waiting for the orphan delete to finish before the re-create")
		return ctrl.Result{RequeueAfter: convergeRecheck}, nil, true
	case progress == converge.Recreated:
		log.Info("re-created the StatefulSet once its orphan delete finished")
		r.recreated(ctx, key)
	}
	return ctrl.Result{}, nil, false
}

// managed returns the StatefulSet of key when claimwarden manages it; nil
// when it is gone (then everything remembered about it is forgotten), being
// deleted, out of scope or opted out.
func (r *Reconciler) managed(ctx context.Context, key types.NamespacedName) (*appsv1.StatefulSet, error) {
	var sts appsv1.StatefulSet
	if err := r.client.Get(ctx, key, &sts); err != nil {
		if apierrors.IsNotFound(err) {
			// Said, so that a StatefulSet gone with no re-create recorded
			// shows in the log (a lost journal record would look like this).
			ctrl.LoggerFrom(ctx).V(1).Info("the StatefulSet is gone and no re-create of it is recorded: forgetting it")
			r.forget(key)
		}
		return nil, client.IgnoreNotFound(err)
	}
	if !sts.DeletionTimestamp.IsZero() || !r.inScope(&sts) {
		return nil, nil
	}
	if why := plan.SkipReason(&sts); why != "" {
		if r.memory.firstUnmanaged(key) {
			// Once: a sink's Forget may walk its memory.
			ctrl.LoggerFrom(ctx).Info("not managing this StatefulSet", "reason", why)
			forgetMetrics(r.clusterLabel, key)
			r.reserved.drop(key)
			r.sinks.Forget(key)
		}
		return nil, nil
	}
	r.memory.managed(key)
	return &sts, nil
}

// forget drops what the controller and its sinks remember about a
// StatefulSet that is gone.
func (r *Reconciler) forget(key types.NamespacedName) {
	forgetMetrics(r.clusterLabel, key)
	r.memory.forget(key)
	r.reserved.drop(key)
	r.sinks.Forget(key)
}

// roll brings sts's claims one step towards its target and reports:
// assess (diff, gate, plan), converge the StatefulSet when the target's
// templates differ, patch claims, report, publish.
func (r *Reconciler) roll(ctx context.Context, sts *appsv1.StatefulSet, before, vcr *v1alpha1.VolumeClaimRollout) (ctrl.Result, error) {
	strategy, err := plan.StrategyOf(sts, r.opts.Strategy)
	if err != nil {
		r.stall(ctx, sts, before, vcr, r.sourceOf(sts), v1alpha1.ReasonInvalidAnnotation, err.Error())
		return ctrl.Result{}, nil
	}
	restarts, err := plan.RestartForExpansionOf(sts, r.opts.RestartForExpansion)
	if err != nil {
		r.stall(ctx, sts, before, vcr, r.sourceOf(sts), v1alpha1.ReasonInvalidAnnotation, err.Error())
		return ctrl.Result{}, nil
	}
	t := r.targetOf(sts, vcr)
	setSourceCondition(vcr, t)
	a, err := r.assess(ctx, sts, t)
	var invalid *assess.InvalidTemplates
	if errors.As(err, &invalid) {
		// Bad templates wait for the StatefulSet to change; retrying cannot help.
		r.stall(ctx, sts, before, vcr, t.src, v1alpha1.ReasonInvalidTemplate, invalid.Error())
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if r.memory.cacheBehind(client.ObjectKeyFromObject(sts), a.Claims) {
		// The cache has not seen a claim patch of ours yet, and its watch
		// event brings the StatefulSet back. Going on with the old claim
		// would patch it again and report a step backwards; the requeue is
		// only a safety net.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	byKubernetes, err := r.claimUpdates.byKubernetes(ctx, sts)
	if err != nil {
		return ctrl.Result{}, err
	}
	if byKubernetes {
		return r.standAside(ctx, sts, before, vcr, t, strategy, a), nil
	}
	if err := r.authorize(ctx, t.authority, stepWrites(sts, t, a)); err != nil {
		return r.notAuthorized(ctx, sts, before, vcr, t.src, err)
	}
	converging := false
	if t.recreateWith != nil && !a.Verdict.Denied() {
		progress, err := r.convergeTo(ctx, sts, t)
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		converging = progress == converge.Waiting || progress == converge.Adopting
	}
	out := r.patchClaims(ctx, sts, t.src, a.Claims, a.Plan.Patch, t.ignoredLabels)
	if a, err = r.afterPatches(ctx, sts, t, a, out); err != nil {
		return ctrl.Result{}, err
	}
	rs, err := r.restartPods(ctx, restartStep{r: r, sts: sts, vcr: vcr, src: t.src, authority: t.authority, a: &a, enabled: restarts,
		mayStart: !a.Verdict.Denied() && out.rejected == nil && t.recreateWith == nil})
	if err != nil {
		return ctrl.Result{}, err
	}
	r.report(vcr, t, strategy, a, out, rs)
	r.publish(ctx, sts, t.src, before, vcr, &a)
	return r.next(sts, converging, a.Verdict, out, rs), nil
}

// assess compares the target with the claims, asks the policies and plans
// (assess.Assess, which `claimwarden check` calls too). A plan never
// patches a claim before the StatefulSet carries the target's templates,
// nor while anything of the proposal is denied.
func (r *Reconciler) assess(ctx context.Context, sts *appsv1.StatefulSet, t target) (assess.Assessment, error) {
	// Every claim named after the StatefulSet, of its templates and of
	// removed ones (which diff reports), from the cache's index: the
	// namespace's other claims are never read.
	var pvcs corev1.PersistentVolumeClaimList
	if err := r.index.ensure(ctx); err != nil {
		return assess.Assessment{}, err
	}
	if err := r.client.List(ctx, &pvcs, client.InNamespace(sts.Namespace), client.MatchingFields{claimStatefulSetsIndex: sts.Name}); err != nil {
		return assess.Assessment{}, fmt.Errorf("listing claims of StatefulSet %s/%s: %w", sts.Namespace, sts.Name, err)
	}
	return r.assessClaims(ctx, sts, t, pvcs.Items, true)
}

// assessClaims is assess on the claims pvcs. With reserve, what the
// proposal still has to grow is reserved against the namespace's quotas
// until it is done or denied, so that the next StatefulSet's proposal is
// decided with it. Claims as a patch just returned them do not reserve:
// the quotas' use in the cache may not count the patch yet, and the
// reservation must not shrink before it does.
func (r *Reconciler) assessClaims(ctx context.Context, sts *appsv1.StatefulSet, t target, pvcs []corev1.PersistentVolumeClaim, reserve bool) (assess.Assessment, error) {
	onDelete, err := r.onDeleteOf(ctx, sts)
	if err != nil {
		return assess.Assessment{}, err
	}
	key := client.ObjectKeyFromObject(sts)
	c := r.cluster(ctx, t.sts.Namespace, policies.Source(t.src), pvcs)
	c.OnDelete = onDelete
	in, err := assess.NewInput(sts, t.sts, pvcs, t.ignoredLabels, r.settings(), c)
	if err != nil {
		return assess.Assessment{}, err
	}
	var a assess.Assessment
	r.reserved.decide(key.Namespace, func() {
		in.InFlight = r.reserved.others(key)
		if a, err = assess.Assess(ctx, r.verdicts, in); err == nil && reserve {
			r.reserved.set(key, a)
		}
	})
	return a, err
}

// standAsideMessage is the message of every claim Kubernetes updates itself.
const standAsideMessage = "waiting: Kubernetes updates this claim (spec.volumeClaimUpdateStrategy " + ClaimUpdateInPlace +
	", KEP-4650); claimwarden asks the policies and reports, and writes nothing"

// standAside reports a StatefulSet whose claims Kubernetes updates itself:
// the policies are still asked and their verdicts reported (an
// organisation's guardrails stand, as a commit status), but nothing is
// patched, restarted or re-created.
func (r *Reconciler) standAside(ctx context.Context, sts *appsv1.StatefulSet, before, vcr *v1alpha1.VolumeClaimRollout, t target, strategy v1alpha1.UpdateStrategy, a assess.Assessment) ctrl.Result {
	a.Hold(standAsideMessage)
	r.report(vcr, t, strategy, a, patchOutcome{}, restartOutcome{})
	r.publish(ctx, sts, t.src, before, vcr, &a)
	return r.next(sts, false, a.Verdict, patchOutcome{}, restartOutcome{})
}

// next is when to reconcile again: soon while a re-create waits for its
// orphan delete, when a rejected patch's back-off ends, when denials
// expire; otherwise on the next event.
func (r *Reconciler) next(sts *appsv1.StatefulSet, converging bool, verdict assess.Verdict, out patchOutcome, rs restartOutcome) ctrl.Result {
	res := r.nextEvent(sts, converging, verdict, out)
	if rs.requeue > 0 && (res.RequeueAfter <= 0 || rs.requeue < res.RequeueAfter) {
		res.RequeueAfter = rs.requeue
	}
	return res
}

// nextEvent is next without restarts.
func (r *Reconciler) nextEvent(sts *appsv1.StatefulSet, converging bool, verdict assess.Verdict, out patchOutcome) ctrl.Result {
	switch {
	case converging:
		// Resume, at the top of a later reconcile, creates the object.
		return ctrl.Result{RequeueAfter: convergeRecheck}
	case out.rejected != nil:
		return ctrl.Result{RequeueAfter: time.Until(out.rejected.notBefore)}
	}
	r.retry.Forget(types.NamespacedName{Namespace: sts.Namespace, Name: sts.Name})
	if verdict.Denied() {
		// Ask again once the denials expire (see gate.Cache).
		return ctrl.Result{RequeueAfter: r.opts.PolicyRecheck}
	}
	return ctrl.Result{}
}
