package rollout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/assess"
	"github.com/claimwarden/claimwarden/reconciler/authority"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/gate"
	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// restartRecheck is how soon a restart in progress is looked at again: the
// controller watches no Pods, so it polls the one Pod it restarts.
const restartRecheck = time.Second

// restartOutcome is what the restart step did and says.
type restartOutcome struct {
	// summary says, for the conditions, what claims waiting for a restart
	// wait for; "" when none waits.
	summary string
	// active is true while the controller restarts a Pod (evicting it, or
	// waiting for its replacement): in progress, not waiting on a person.
	active bool
	// requeue is when to look again; 0 leaves it to the next event.
	requeue time.Duration
}

// restartStep is one reconcile of the restarts of one StatefulSet.
type restartStep struct {
	r   *Reconciler
	sts *appsv1.StatefulSet
	vcr *v1alpha1.VolumeClaimRollout
	src v1alpha1.Source
	// authority must be allowed to evict the Pod (nil: the tool's own).
	authority *v1alpha1.Identity
	a         *assess.Assessment
	enabled   bool
	// mayStart is false while something else holds the StatefulSet's
	// changes (a denial, a rejected patch, a re-create): no new eviction.
	mayStart bool
}

// restartPods restarts, when enabled, the Pods whose claims wait for their
// file system to grow on remount: one Pod of the StatefulSet at a time,
// highest ordinal first, through the Eviction API (PodDisruptionBudgets
// decide; a refusal is retried with back-off), each only once the policies
// allow it and every Pod of the StatefulSet is Ready, the next only once the
// previous one is back, Ready, and its claims no longer wait for it. It never
// sleeps: it returns when to look again.
//
// Which Pod is being restarted is recorded in status.restart before the
// eviction, so a controller restarted at any point finds it and never
// evicts a second Pod meanwhile. An eviction happens only while that record
// names the live Pod by UID and that Pod's claims wait for it: a record
// someone else wrote can at most ask for a restart the controller would
// make itself, and the policies are asked again before every eviction.
func (r *Reconciler) restartPods(ctx context.Context, s restartStep) (restartOutcome, error) {
	if rec := s.vcr.Status.Restart; rec != nil {
		return s.follow(ctx, rec)
	}
	if len(s.a.Plan.Restart) == 0 {
		return restartOutcome{}, nil
	}
	if !s.enabled {
		why := fmt.Sprintf("claimwarden restarts no Pod of this StatefulSet (set annotation %s: \"true\", or restartForExpansion, to let it); restart the Pod to finish the resize", v1alpha1.RestartForExpansionAnnotation)
		return s.waitAll(why), nil
	}
	if !s.mayStart {
		return s.waitAll("no Pod is restarted while the StatefulSet's other changes are held"), nil
	}
	ordinal := s.a.Plan.Restart[0].Ordinal
	pod, err := s.pod(ctx, ordinal)
	if err != nil {
		return restartOutcome{}, err
	}
	name := diff.PodName(s.sts.Name, ordinal)
	switch {
	case pod == nil:
		return s.wait(ordinal, "Pod "+name+" does not run; its file system grows when it starts", false, 0), nil
	case !podReady(pod) || s.sts.Status.ReadyReplicas < ptr.Deref(s.sts.Spec.Replicas, 1):
		// Never take a Pod away while the StatefulSet is short of one.
		return s.wait(ordinal, fmt.Sprintf("Pod %s is restarted once every Pod of the StatefulSet is Ready (%d/%d)",
			name, s.sts.Status.ReadyReplicas, ptr.Deref(s.sts.Spec.Replicas, 1)), false, restartRecheck), nil
	}
	if denial, err := s.refused(ctx, pod, ordinal); err != nil || denial != "" {
		return s.refuse(ctx, pod, ordinal, denial), err
	}
	rec := &v1alpha1.PodRestart{Pod: pod.Name, UID: string(pod.UID), Ordinal: ordinal, Since: metav1.Now()}
	if err := r.saveRestart(ctx, s.vcr, rec); err != nil {
		return restartOutcome{}, err
	}
	s.vcr.Status.Restart = rec
	return s.evict(ctx, pod, ordinal), nil
}

// follow continues the restart rec records.
func (s restartStep) follow(ctx context.Context, rec *v1alpha1.PodRestart) (restartOutcome, error) {
	pod, err := s.pod(ctx, rec.Ordinal)
	if err != nil {
		return restartOutcome{}, err
	}
	waiting := len(s.claimsOf(rec.Ordinal)) > 0
	switch {
	case pod != nil && string(pod.UID) == rec.UID && pod.DeletionTimestamp.IsZero():
		// Not evicted yet: refused for now, or the controller stopped
		// between the record and the eviction.
		if !waiting || !s.enabled {
			s.vcr.Status.Restart = nil
			return restartOutcome{requeue: restartRecheck}, nil
		}
		if !s.mayStart {
			return s.wait(rec.Ordinal, "the eviction of Pod "+rec.Pod+" waits while the StatefulSet's other changes are held", false, 0), nil
		}
		if out, held := s.held(pod, rec.Ordinal); held {
			return out, nil
		}
		if denial, err := s.refused(ctx, pod, rec.Ordinal); err != nil || denial != "" {
			s.vcr.Status.Restart = nil
			return s.refuse(ctx, pod, rec.Ordinal, denial), err
		}
		return s.evict(ctx, pod, rec.Ordinal), nil
	case pod != nil && string(pod.UID) == rec.UID:
		return s.wait(rec.Ordinal, "Pod "+rec.Pod+" evicted; waiting for it to stop", true, restartRecheck), nil
	case pod == nil:
		return s.wait(rec.Ordinal, "Pod "+rec.Pod+" evicted; waiting for the StatefulSet controller to re-create it", true, restartRecheck), nil
	case !podReady(pod):
		return s.wait(rec.Ordinal, "Pod "+rec.Pod+" restarted; waiting for it to be Ready", true, restartRecheck), nil
	case waiting:
		// Restarting it again could loop forever on a driver that does
		// not grow the file system on mount: a person decides.
		return s.wait(rec.Ordinal, "Pod "+rec.Pod+" was restarted and is Ready, and the file system resize is still pending; claimwarden does not restart it again", false, 0), nil
	}
	ctrl.LoggerFrom(ctx).Info("restarted Pod; its claims no longer wait for it", "pod", rec.Pod)
	s.vcr.Status.Restart = nil
	// The next claim is patched, or the next Pod restarted, on a later
	// reconcile, with every Pod's readiness read again.
	return restartOutcome{requeue: restartRecheck}, nil
}

// evict asks the Eviction API to evict pod, for its UID only.
func (s restartStep) evict(ctx context.Context, pod *corev1.Pod, ordinal int32) restartOutcome {
	key := types.NamespacedName{Namespace: s.sts.Namespace, Name: s.sts.Name}
	if out, held := s.held(pod, ordinal); held {
		return out
	}
	eviction := &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}},
	}
	err := s.r.client.SubResource("eviction").Create(ctx, pod, eviction)
	switch {
	case err == nil:
		evictionsTotal.WithLabelValues(s.r.clusterLabel, "evicted").Inc()
		s.r.restartRetry.Forget(key)
		s.r.memory.holdEviction(key, nil)
		claims := s.claimsOf(ordinal)
		s.r.events.Eventf(s.sts, pod, s.src, corev1.EventTypeNormal, v1alpha1.ReasonPodEvicted, "Evict",
			"evicted Pod %s so that the file systems of %s grow (FileSystemResizePending)", pod.Name, names(claims))
		ctrl.LoggerFrom(ctx).Info("evicted Pod for its claims' file system resize", "pod", pod.Name, "claims", names(claims))
		return s.wait(ordinal, "Pod "+pod.Name+" evicted; waiting for it to come back Ready", true, restartRecheck)
	case apierrors.IsTooManyRequests(err):
		// A PodDisruptionBudget allows no disruption now: expected, so
		// neither an error nor a log line per attempt.
		evictionsTotal.WithLabelValues(s.r.clusterLabel, "refused").Inc()
		return s.hold(pod, ordinal, func(delay time.Duration) string {
			return fmt.Sprintf("the eviction of Pod %s is refused for now (%s); retrying in %s", pod.Name, apiMessage(err), delay.Round(time.Second))
		})
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		// Gone or replaced meanwhile: the next look tells.
		return s.wait(ordinal, "Pod "+pod.Name+" changed while being evicted", true, restartRecheck)
	}
	evictionsTotal.WithLabelValues(s.r.clusterLabel, "failed").Inc()
	ctrl.LoggerFrom(ctx).Info("evicting Pod failed", "pod", pod.Name, "error", err.Error())
	return s.hold(pod, ordinal, func(delay time.Duration) string {
		return fmt.Sprintf("evicting Pod %s failed (retrying in %s): %v", pod.Name, delay.Round(time.Second), err)
	})
}

// held reports an eviction of pod refused before whose back-off has not
// ended: neither the policies nor the Eviction API are asked again yet.
func (s restartStep) held(pod *corev1.Pod, ordinal int32) (restartOutcome, bool) {
	h := s.r.memory.heldEviction(types.NamespacedName{Namespace: s.sts.Namespace, Name: s.sts.Name})
	if h == nil || h.uid != string(pod.UID) || !time.Now().Before(h.notBefore) {
		return restartOutcome{}, false
	}
	return s.wait(ordinal, h.message, true, time.Until(h.notBefore)), true
}

// hold backs off after a refused eviction: the next one is asked once the
// delay ends, not at every event meanwhile.
func (s restartStep) hold(pod *corev1.Pod, ordinal int32, say func(time.Duration) string) restartOutcome {
	key := types.NamespacedName{Namespace: s.sts.Namespace, Name: s.sts.Name}
	delay := s.r.restartRetry.When(key)
	msg := say(delay)
	s.r.memory.holdEviction(key, &heldEviction{uid: string(pod.UID), message: msg, notBefore: time.Now().Add(delay)})
	return s.wait(ordinal, msg, true, delay)
}

// refused asks the policies whether pod may be restarted for the claims of
// ordinal, uncached: a policy on the clock (restart windows) must be asked
// at the time of each eviction. It returns the denial text, "" if allowed.
func (s restartStep) refused(ctx context.Context, pod *corev1.Pod, ordinal int32) (string, error) {
	claims := s.claimsOf(ordinal)
	qs := make([]plan.Question, 0, len(claims))
	for _, c := range claims {
		qs = append(qs, plan.RestartQuestion(s.sts, c, s.a.Claims[c.Name], pod.Name))
	}
	err := s.r.authorize(ctx, s.authority, []authority.Write{authority.EvictPod(pod.Namespace, pod.Name)})
	if refusal, ok := errors.AsType[*authority.Refusal](err); ok {
		return "not authorised: " + refusal.Error(), nil
	}
	if err != nil {
		return "", err
	}
	ans, err := gate.Ask(ctx, s.r.opts.Policies, qs, gate.ClusterFacts(s.r.client, s.sts.Namespace, policies.Source(s.src)))
	if err != nil {
		return "", err
	}
	var denials []string
	for name, text := range ans.ClaimDenials() {
		denials = append(denials, name+": "+text)
	}
	slices.Sort(denials)
	return strings.Join(denials, "; "), nil
}

// refuse reports a restart the policies refused; it is asked again after
// the policy recheck interval.
func (s restartStep) refuse(ctx context.Context, pod *corev1.Pod, ordinal int32, denial string) restartOutcome {
	if denial == "" {
		return restartOutcome{}
	}
	s.r.events.Eventf(s.sts, pod, s.src, corev1.EventTypeWarning, v1alpha1.ReasonRestartRefused, "Evict",
		"restart of Pod %s refused by policy: %s", pod.Name, denial)
	ctrl.LoggerFrom(ctx).Info("restart refused by policy", "pod", pod.Name, "denial", denial)
	return s.wait(ordinal, "restart of Pod "+pod.Name+" refused by policy: "+denial, false, s.r.opts.PolicyRecheck)
}

// wait adds why to the messages of the claims of ordinal waiting for a
// restart, and says it for the conditions.
func (s restartStep) wait(ordinal int32, why string, active bool, requeue time.Duration) restartOutcome {
	for i := range s.a.Plan.Steps {
		st := &s.a.Plan.Steps[i]
		if st.Phase == v1alpha1.ClaimWaitingForRestart && st.Claim.Ordinal == ordinal {
			st.Message += "; " + why
		}
	}
	summary := why
	if claims := s.claimsOf(ordinal); len(claims) > 0 {
		summary = names(claims) + " wait for Pod " + diff.PodName(s.sts.Name, ordinal) + " to restart: " + why
	}
	return restartOutcome{summary: summary, active: active, requeue: requeue}
}

// waitAll is wait for every claim waiting for a restart, which none will get.
func (s restartStep) waitAll(why string) restartOutcome {
	for i := range s.a.Plan.Steps {
		if st := &s.a.Plan.Steps[i]; st.Phase == v1alpha1.ClaimWaitingForRestart {
			st.Message += "; " + why
		}
	}
	return restartOutcome{summary: names(s.a.Plan.Restart) + " wait for their Pods to restart (file system resize pending): " + why}
}

// claimsOf are the claims of ordinal that wait for a restart.
func (s restartStep) claimsOf(ordinal int32) []diff.ClaimChange {
	var out []diff.ClaimChange
	for _, c := range s.a.Plan.Restart {
		if c.Ordinal == ordinal {
			out = append(out, c)
		}
	}
	return out
}

// pod reads the StatefulSet's Pod of ordinal, uncached (the controller
// watches no Pods); nil when it does not exist or is not the StatefulSet's.
func (s restartStep) pod(ctx context.Context, ordinal int32) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	err := s.r.pods.Get(ctx, types.NamespacedName{Namespace: s.sts.Namespace, Name: diff.PodName(s.sts.Name, ordinal)}, pod)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Pod %s/%s: %w", s.sts.Namespace, diff.PodName(s.sts.Name, ordinal), err)
	}
	if owner := metav1.GetControllerOf(pod); owner == nil || owner.Kind != "StatefulSet" || owner.Name != s.sts.Name {
		return nil, nil
	}
	return pod, nil
}

// saveRestart writes the record before the eviction, so that it is durable
// before the Pod goes.
func (r *Reconciler) saveRestart(ctx context.Context, vcr *v1alpha1.VolumeClaimRollout, rec *v1alpha1.PodRestart) error {
	patch := &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: vcr.Namespace, Name: vcr.Name}}
	base := patch.DeepCopy()
	patch.Status.Restart = rec
	if err := r.client.Status().Patch(ctx, patch, client.MergeFrom(base), client.FieldOwner(v1alpha1.ControllerName)); err != nil {
		return fmt.Errorf("recording the restart of Pod %s/%s: %w", vcr.Namespace, rec.Pod, err)
	}
	return nil
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func names(cs []diff.ClaimChange) string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return strings.Join(out, ", ")
}

// apiMessage is the API server's own message of err.
func apiMessage(err error) string {
	if s, ok := err.(apierrors.APIStatus); ok && s.Status().Message != "" {
		return s.Status().Message
	}
	return err.Error()
}
