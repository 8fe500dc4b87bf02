package rollout

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/gitstatus"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// CommitStatuses receives the commit status each rollout should show; the
// gitstatus.Reporter implements it (non-blocking, deduplicated, retried).
type CommitStatuses interface {
	Report(t gitstatus.Target, s gitstatus.Status) bool
	Seed(t gitstatus.Target, s gitstatus.Status)
}

// FluxNotifier forwards outcomes to Flux (integrations/flux.Notifier).
type FluxNotifier interface {
	Notify(ctx context.Context, sts *appsv1.StatefulSet, revision, state, reason, description string) bool
}

// reported is the source and commit status state a rollout last reported.
type reported struct {
	src   v1alpha1.Source
	state gitstatus.State
}

// commitStatusOf is the status a rollout shows on its commit, worded by
// outcome.StateOf as `claimwarden check` words it for the pull request.
func commitStatusOf(vcr *v1alpha1.VolumeClaimRollout) (gitstatus.State, string) {
	state, msg := outcome.StateOf(vcr)
	return gitstatus.State(state), msg
}

// statusTarget is where a StatefulSet's commit status goes, if anywhere.
func (r *Reconciler) statusTarget(ctx context.Context, sts *appsv1.StatefulSet, src v1alpha1.Source) (gitstatus.Target, bool) {
	if r.opts.CommitStatuses == nil || src.Repository == "" || src.Revision == "" {
		return gitstatus.Target{}, false
	}
	once := func(msg string, kv ...any) {
		if _, said := r.statusWarned.LoadOrStore(src.Repository+"@"+src.Revision, true); !said {
			ctrl.LoggerFrom(ctx).Info(msg, kv...)
		}
	}
	sha, ok := proposal.ParseRevision(src.Revision)
	if !ok {
		once("the revision names no commit: no commit status is posted", "revision", src.Revision)
		return gitstatus.Target{}, false
	}
	repo, err := gitstatus.ParseRepositoryURL(src.Repository)
	if err != nil {
		once("no commit status is posted", "error", err.Error())
		return gitstatus.Target{}, false
	}
	return gitstatus.Target{Repo: repo, SHA: sha, Context: gitstatus.StatusContext(r.opts.StatusContextPrefix, sts.Namespace, sts.Name)}, true
}

// reportCommitStatus hands the rollout's current status to the reporter,
// first telling it what the VolumeClaimRollout says was posted before (after
// a restart), so nothing is posted twice.
func (r *Reconciler) reportCommitStatus(ctx context.Context, sts *appsv1.StatefulSet, vcr *v1alpha1.VolumeClaimRollout) {
	src := vcr.Status.Proposal.Source
	state, desc := commitStatusOf(vcr)
	r.reported.Store(types.NamespacedName{Namespace: sts.Namespace, Name: sts.Name}, reported{src: src, state: state})
	if r.opts.FluxNotifier != nil && src.Revision != "" {
		r.opts.FluxNotifier.Notify(ctx, sts, src.Revision, string(state), conditions.GetReason(vcr, meta.ReadyCondition), gitstatus.TruncateDescription(desc))
	}
	t, ok := r.statusTarget(ctx, sts, src)
	if !ok {
		return
	}
	if last := vcr.Status.LastCommitStatus; last != nil && last.Revision == t.SHA && last.Context == t.Context {
		key := t.Context + "@" + t.SHA
		if _, seeded := r.statusSeeded.LoadOrStore(key, true); !seeded {
			r.opts.CommitStatuses.Seed(t, gitstatus.Status{State: gitstatus.State(last.State), Context: last.Context, Description: last.Description, TargetURL: r.opts.StatusTargetURL})
		}
	}
	s := gitstatus.Status{State: state, Context: t.Context, Description: gitstatus.TruncateDescription(desc), TargetURL: r.opts.StatusTargetURL}
	if !r.opts.CommitStatuses.Report(t, s) {
		ctrl.LoggerFrom(ctx).Info("the commit status queue is full; the status is reported again on the next reconcile", "context", t.Context)
	}
}

// RecordPosted returns the reporter's OnPosted callback: it writes the posted
// status into the VolumeClaimRollout named by the context's last two segments.
func RecordPosted(c client.Client, log func(error, string, ...any)) func(gitstatus.Target, gitstatus.Status) {
	return func(t gitstatus.Target, s gitstatus.Status) {
		parts := strings.Split(t.Context, "/")
		if len(parts) < 3 {
			return
		}
		key := types.NamespacedName{Namespace: parts[len(parts)-2], Name: parts[len(parts)-1]}
		posted := v1alpha1.CommitStatus{
			Repository: t.Repo.Host + "/" + t.Repo.Path,
			Revision:   t.SHA, Context: t.Context, State: string(s.State),
			Description: s.Description, PostedAt: metav1.NewTime(time.Now()),
		}
		body, err := json.Marshal(map[string]any{"status": map[string]any{"lastCommitStatus": posted}})
		if err != nil {
			return
		}
		vcr := &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Status().Patch(ctx, vcr, client.RawPatch(types.MergePatchType, body), client.FieldOwner(FieldOwner)); client.IgnoreNotFound(err) != nil {
			log(err, "recording the posted commit status", "rollout", key.String())
		}
	}
}
