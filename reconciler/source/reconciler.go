package source

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// Reconciler turns a tool's blocked applies into proposals, for any Tool.
type Reconciler struct {
	tool    Tool
	clients Clients
	store   *proposal.Store
	spokes  Spokes
	selects func(client.Object) (bool, string)
	memory  *memory
}

// NewReconciler returns the Reconciler of tool's objects.
func NewReconciler(tool Tool, c Clients, o Options) (*Reconciler, error) {
	return newReconciler(tool, c, o.withDefaults())
}

// newReconciler is NewReconciler with o's defaults filled.
func newReconciler(tool Tool, c Clients, o Options) (*Reconciler, error) {
	if o.Proposals == nil {
		return nil, errors.New("source: Options.Proposals is required")
	}
	m, err := newMemory(o.MaxObjects)
	if err != nil {
		return nil, err
	}
	return &Reconciler{tool: tool, clients: c, store: o.Proposals, spokes: o.Spokes, selects: o.Select, memory: m}, nil
}

// Reconcile runs the phases for one tool object: forget what is gone or
// skipped; drop what Git no longer asks for when nothing is blocked; read
// the desired StatefulSets once per revision key; propose those whose
// templates differ from the live ones; drop proposals for StatefulSets gone
// from the source.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	owner := proposal.Owner{Kind: r.tool.Kind(), Namespace: req.Namespace, Name: req.Name}
	obj := r.tool.NewObject()
	if err := r.clients.Cached.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(ctx, owner, req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if obj.GetDeletionTimestamp() != nil {
		// The tool is deleting it (and maybe what it applied): nothing to converge.
		r.forget(ctx, owner, req.NamespacedName)
		return ctrl.Result{}, nil
	}
	if r.selects != nil {
		if handle, note := r.selects(obj); !handle {
			// Another instance's (sharding): nothing of it is acted on here.
			r.dropOwned(ctx, owner)
			if note != "" {
				r.sayOnce(ctx, obj, v1alpha1.Source{Kind: owner.Kind, Namespace: owner.Namespace, Name: owner.Name},
					Note{Type: corev1.EventTypeWarning, Reason: ReasonNoShard, Message: note})
			}
			return ctrl.Result{}, nil
		}
	}
	reading, err := r.tool.Read(ctx, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	src := v1alpha1.Source{Kind: owner.Kind, Namespace: owner.Namespace, Name: owner.Name, Revision: reading.Revision}
	if reading.State == Skipped {
		// A skipped object applies nothing, so nothing it proposed may be acted on.
		r.dropOwned(ctx, owner)
		r.forgetTool(req.NamespacedName)
		for _, n := range r.memory.skip(req.NamespacedName, reading.Notes) {
			r.say(ctx, obj, src, n)
		}
		return ctrl.Result{}, nil
	}
	for _, n := range r.memory.notes(req.NamespacedName, reading.Notes) {
		r.say(ctx, obj, src, n)
	}
	switch reading.State {
	case Waiting:
		return ctrl.Result{}, nil
	case Idle:
		r.memory.idle(req.NamespacedName)
		return ctrl.Result{}, r.dropUnconverged(ctx, owner)
	}
	if r.memory.alreadyProposed(req.NamespacedName, reading.Key) {
		return ctrl.Result{}, nil
	}
	desired, err := r.tool.Desired(ctx, obj)
	if err != nil {
		return ctrl.Result{}, r.readFailed(ctx, obj, src, owner, err)
	}
	if desired.Waiting != "" {
		ctrl.LoggerFrom(ctx).V(1).Info(desired.Waiting, "revision", reading.Revision)
		return ctrl.Result{}, nil
	}
	authority, err := r.tool.Authority(ctx, obj)
	if err != nil {
		return ctrl.Result{}, r.readFailed(ctx, obj, src, owner, err)
	}
	r.setSourceError(ctx, owner, "")
	proposed, refused, err := r.propose(ctx, obj, owner, desired, authority)
	if err != nil {
		if desired.Cluster != "" {
			// A spoke that does not answer stalls only this object's
			// proposal: said on it, where its owner looks.
			r.clients.Recorder.Eventf(obj, nil, src, corev1.EventTypeWarning, ReasonReadFailed, ActionRead, "%s", err.Error())
		}
		return ctrl.Result{}, err
	}
	r.memory.markProposed(req.NamespacedName, reading.Key)
	r.reportRefusals(ctx, obj, src, refused)
	r.reportProposals(ctx, obj, src, desired, proposed)
	return ctrl.Result{}, nil
}

// propose puts a proposal into the store for every candidate the tool
// manages whose templates differ from its live StatefulSet's, all of them
// as one round (Proposal.Round, what the tool is nudged once for), drops those of
// StatefulSets gone from the source and those never converged that are no
// longer asked for, and returns the StatefulSets proposed and, for each
// candidate the tool does not manage, why it was left alone.
func (r *Reconciler) propose(ctx context.Context, obj client.Object, owner proposal.Owner, d Desired, authority *v1alpha1.Identity) (proposed, refused []string, err error) {
	src := v1alpha1.Source{Kind: owner.Kind, Namespace: owner.Namespace, Name: owner.Name, Repository: d.Repository, Revision: d.Revision, Chart: d.Chart}
	target, err := r.target(d.Cluster)
	if err != nil {
		// Nothing it proposed elsewhere is asked for any more either.
		r.dropOwned(ctx, owner)
		return nil, nil, fmt.Errorf("%s %s/%s: %w", owner.Kind, owner.Namespace, owner.Name, err)
	}
	inSource, proposedNow := map[types.NamespacedName]bool{}, map[types.NamespacedName]bool{}
	var round []proposal.Proposal
	for _, key := range d.Others {
		inSource[key] = true
	}
	for _, sts := range d.Candidates {
		key := types.NamespacedName{Namespace: sts.Namespace, Name: sts.Name}
		var live appsv1.StatefulSet
		if err := target.Reader.Get(ctx, key, &live); err != nil {
			if apierrors.IsNotFound(err) {
				// The tool creates it (a new StatefulSet needs no
				// convergence), or a re-create of ours is under way: what
				// was proposed for it stays.
				inSource[key] = true
				continue
			}
			return nil, nil, fmt.Errorf("reading StatefulSet %s%s of %s %s/%s: %w", key, inCluster(d.Cluster), owner.Kind, owner.Namespace, owner.Name, err)
		}
		if why := r.tool.Manages(ctx, obj, &live); why != nil {
			// Not the tool's: a proposal this object made earlier for it
			// is dropped below with those gone from the source.
			refused = append(refused, fmt.Sprintf("StatefulSet %s: %v", key, why))
			continue
		}
		inSource[key] = true
		if diff.TemplatesEqual(live.Spec.VolumeClaimTemplates, sts.Spec.VolumeClaimTemplates) {
			continue // not what blocks the tool
		}
		round = append(round, proposal.Proposal{StatefulSet: sts, Source: src, IgnoredLabels: d.IgnoredLabels, Revisions: d.Revisions, Authority: authority})
		proposedNow[key] = true
		proposed = append(proposed, key.String())
	}
	if len(round) > 0 {
		// One round, stored at once: the tool is nudged once for all of
		// them, and none converges before the others are known.
		n := target.Proposals.NextRound()
		for i := range round {
			round[i].Round = n
		}
		target.Proposals.SetAll(ctx, round)
	}
	for _, key := range target.Proposals.Owned(owner) {
		if !inSource[key] {
			// Removed from Git: the tool prunes it or leaves it; either way it is not ours to converge.
			target.Proposals.Delete(ctx, owner, key)
		}
	}
	for name, spoke := range r.clusters() {
		if name != d.Cluster {
			// The object applies to another cluster now: what it proposed
			// for this one is no longer asked for.
			dropAll(ctx, spoke.Proposals, owner)
		}
	}
	// A converged earlier proposal still names its commit; one never
	// converged (say, denied, then reverted in Git) is no longer asked for.
	if err := target.Proposals.DropUnconverged(ctx, target.Reader, owner, proposedNow); err != nil {
		return nil, nil, err
	}
	return proposed, refused, nil
}

// reportRefusals says, once per read, which StatefulSets of the desired
// state the tool does not manage: a tenant's build or record naming another
// namespace's StatefulSet is visible on its own object, and nothing else.
func (r *Reconciler) reportRefusals(ctx context.Context, obj client.Object, src v1alpha1.Source, refused []string) {
	if len(refused) == 0 {
		return
	}
	msg := fmt.Sprintf("revision %s names StatefulSets %s %s/%s does not manage; claimwarden leaves them alone: %s",
		src.Revision, src.Kind, src.Namespace, src.Name, strings.Join(refused, "; "))
	r.clients.Recorder.Eventf(obj, nil, src, corev1.EventTypeWarning, ReasonNotManaged, ActionPropose, "%s", msg)
	ctrl.LoggerFrom(ctx).Info(msg)
}

// reportProposals says what a read of the desired StatefulSets proposed.
func (r *Reconciler) reportProposals(ctx context.Context, obj client.Object, src v1alpha1.Source, d Desired, proposed []string) {
	log := ctrl.LoggerFrom(ctx)
	switch {
	case len(proposed) > 0:
		r.clients.Recorder.Eventf(obj, nil, src, corev1.EventTypeNormal, ReasonProposed, ActionPropose,
			"revision %s changes the volumeClaimTemplates of %v: claimwarden evaluates and converges them", src.Revision, proposed)
		log.Info("proposed StatefulSets the GitOps tool cannot apply", "kind", src.Kind, "revision", src.Revision, "statefulSets", proposed)
	case d.NothingToDo != "":
		r.sayOnce(ctx, obj, src, Note{Type: corev1.EventTypeNormal, Reason: ReasonNothingToDo, Message: d.NothingToDo})
	default:
		log.V(1).Info("no blocked StatefulSet changes its volumeClaimTemplates", "kind", src.Kind, "revision", src.Revision)
	}
}

// readFailed reports a source that cannot be read on the rollouts it
// proposed for and on the tool object, and returns err so that the
// controller retries with back-off.
func (r *Reconciler) readFailed(ctx context.Context, obj client.Object, src v1alpha1.Source, owner proposal.Owner, err error) error {
	reason, action := ReasonReadFailed, ActionRead
	if re, ok := errors.AsType[*ReadError](err); ok {
		reason, action = re.Reason, re.Action
	}
	r.setSourceError(ctx, owner, err.Error())
	r.clients.Recorder.Eventf(obj, nil, src, corev1.EventTypeWarning, reason, action, "%s", err.Error())
	return err
}

// forget drops what a tool object proposed and all that is remembered of it.
func (r *Reconciler) forget(ctx context.Context, owner proposal.Owner, obj types.NamespacedName) {
	r.dropOwned(ctx, owner)
	r.memory.forget(obj)
	r.forgetTool(obj)
}

// forgetTool tells a tool that remembers per object (a Forgetter) to forget obj.
func (r *Reconciler) forgetTool(obj types.NamespacedName) {
	if f, ok := r.tool.(Forgetter); ok {
		f.Forget(obj)
	}
}

func (r *Reconciler) dropOwned(ctx context.Context, owner proposal.Owner) {
	for _, c := range r.clusters() {
		dropAll(ctx, c.Proposals, owner)
	}
}

func (r *Reconciler) sayOnce(ctx context.Context, obj client.Object, src v1alpha1.Source, n Note) {
	if r.memory.sayOnce(types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}, n) {
		r.say(ctx, obj, src, n)
	}
}

func (r *Reconciler) say(ctx context.Context, obj client.Object, src v1alpha1.Source, n Note) {
	r.clients.Recorder.Eventf(obj, nil, src, n.Type, n.Reason, ActionSkip, "%s", n.Message)
	ctrl.LoggerFrom(ctx).Info(n.Message)
}
