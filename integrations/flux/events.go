package flux

// The Notifier routes claimwarden's rollout outcomes through Flux's
// notification-controller, so that Flux users get them from the Providers
// they already run (GitHub, GitLab, Gitea, Bitbucket commit statuses, chat,
// ...). See docs/flux-notifications.md for the Provider and Alert to set up.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1"
	"github.com/fluxcd/pkg/runtime/events"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/hashicorp/golang-lru/v2/simplelru"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// Labels kustomize-controller puts on every object it applies. The build
// of a Kustomization sets them as kustomize-controller would; events never
// take their Kustomization from them (see Notify).
const (
	LabelKustomizationName      = "kustomize.toolkit.fluxcd.io/name"
	LabelKustomizationNamespace = "kustomize.toolkit.fluxcd.io/namespace"
)

// kustomizationAPIVersion is the GA Kustomization API (Flux 2.0 on).
// notification-controller derives the metadata group it keeps from it, and
// uses it to fetch the Kustomization when an Alert selects by matchLabels.
const kustomizationAPIVersion = kustomizeGroup + "/v1"

const kustomizeGroup = "kustomize.toolkit.fluxcd.io"

// Metadata keys of the events. notification-controller drops every key that
// is neither under the involved object's group (kustomize.toolkit.fluxcd.io/)
// nor, since v1.5.0, under the event group (event.toolkit.fluxcd.io/); what
// survives reaches Providers with the prefix stripped.
const (
	// MetaRevision holds the revision (e.g. main@sha1:<sha>). It is part of
	// notification-controller's rate-limit key, and the commit its Git
	// providers post to before v1.8.0 (bitbucketserver: in every version).
	MetaRevision = kustomizeGroup + "/" + eventv1.MetaRevisionKey
	// MetaCommit carries the bare commit SHA. Since notification-controller
	// v1.8.0 its Git commit-status providers drop every event without it
	// (unless it is kustomize-controller's own "commit_status: update"
	// event), and take the commit from it in preference to the revision.
	MetaCommit = eventv1.Group + "/" + eventv1.MetaCommitKey
	// MetaToken is part of the key notification-controller rate-limits
	// identical events by (5 minutes by default). It holds the state, so an
	// outcome whose description repeats the previous state's is not
	// discarded as a duplicate of it. notification-controller removes it
	// before Providers see the event.
	MetaToken = kustomizeGroup + "/" + eventv1.MetaTokenKey
	// MetaState and MetaStatefulSet are claimwarden's own names for the
	// rollout state and the StatefulSet (<namespace>/<name>). Receivers
	// other than notification-controller see them; notification-controller
	// drops them (see above), hence the copies below.
	MetaState       = "claimwarden.dev/state"
	MetaStatefulSet = "claimwarden.dev/statefulset"
	// MetaFluxState and MetaFluxStatefulSet are the same values under the
	// event group, which notification-controller (v1.5.0 on) passes to
	// Providers as "claimwarden-state" and "claimwarden-statefulset", and
	// to a Provider's commitStatusExpr as event.metadata[...].
	MetaFluxState       = eventv1.Group + "/claimwarden-state"
	MetaFluxStatefulSet = eventv1.Group + "/claimwarden-statefulset"
)

// eventAction fills the Event's required action field. notification-controller
// decodes events with the v1beta1 schema, which has no action, so no Provider
// shows it; it only tells other receivers what the event is about.
const eventAction = "PVCResizeRollout"

const (
	// retryMax bounds the recorder's retries of connection errors and 5xx
	// answers: with its 5s timeout per attempt and 1s, 2s waits, one event
	// occupies the sender for at most about 18s before it is given up.
	// notification-controller itself is at-most-once; holding later events
	// longer than that for one that cannot be delivered helps nobody.
	retryMax = 2
	// defaultMaxQueued bounds the events accepted and not yet sent. It is
	// only reached when notification-controller is unreachable for minutes;
	// new events are then refused (Notify returns false and does not
	// remember them, so a later call may send them) rather than growing
	// memory without bound.
	defaultMaxQueued = 256
	// defaultRemember bounds the memory of sent events used to deduplicate.
	// Without a bound it would grow with every revision ever rolled out;
	// forgetting the oldest costs at most one repeated event, which
	// notification-controller's rate limit and the Git providers' own
	// duplicate check absorb.
	defaultRemember = 4096
)

// Notifier forwards rollout outcomes to Flux's notification-controller as
// events about the Kustomization that proposed the rollout.
//
// Events go out through fluxcd/pkg/runtime's events.Recorder, the client
// every Flux controller uses for the same endpoint. It needs no
// controller-runtime manager: without one it only skips writing Kubernetes
// Events, which claimwarden does not want here anyway (the Event would be
// about a Kustomization claimwarden does not own).
//
// Sending never blocks the caller: Notify queues the event and one goroutine
// sends the queue in order, so that a pending event cannot overtake the
// failure that followed it. A Notifier is safe for concurrent use. It is an
// outcome.Sink.
type Notifier struct {
	rec       events.Recorder
	log       logr.Logger
	maxQueued int

	mu sync.Mutex
	// sent holds the keys of the events accepted, for deduplication,
	// forgetting the least recently seen beyond defaultRemember. n.mu
	// guards it, hence the non-synchronised LRU.
	sent  *simplelru.LRU[eventKey, struct{}]
	queue []outgoing
	// sending is true while a goroutine drains queue; idle is closed
	// whenever it is false, for Flush.
	sending bool
	idle    chan struct{}
}

// eventKey identifies an outcome; Notify sends each at most once.
type eventKey struct {
	kustomization, statefulSet, revision, state, description string
}

// outgoing is one event waiting to be sent.
type outgoing struct {
	kustomization corev1.ObjectReference
	eventType     string
	reason        string
	message       string
	metadata      map[string]string
}

// NewNotifier returns a Notifier posting to webhook, notification-controller's
// event receiver (e.g.
// http://notification-controller.flux-system.svc.cluster.local./), as
// reportingController (e.g. "claimwarden"). log receives delivery errors.
func NewNotifier(webhook string, reportingController string, log logr.Logger) (*Notifier, error) {
	// The recorder itself accepts any string url.Parse accepts, including
	// "" (it then silently sends nothing) and relative references; refuse
	// them here so that a typo in the configuration fails at start-up
	// instead of dropping every event.
	u, err := url.Parse(webhook)
	switch {
	case webhook == "":
		return nil, errors.New("flux events: the notification-controller address is empty")
	case err != nil:
		return nil, fmt.Errorf("flux events: the notification-controller address %q is not a URL: %w", webhook, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("flux events: the notification-controller address %q is not an http or https URL", webhook)
	case u.Host == "":
		return nil, fmt.Errorf("flux events: the notification-controller address %q names no host", webhook)
	case u.User != nil:
		return nil, fmt.Errorf("flux events: the notification-controller address %q holds a user name or password, which notification-controller does not check", webhook)
	}
	if reportingController == "" {
		return nil, errors.New("flux events: the reporting controller name is empty")
	}
	// The recorder calls log.GetSink().Enabled(...) on every event, which
	// panics on logr.Discard() or a zero Logger (both have a nil sink).
	if log.GetSink() == nil {
		log = funcr.New(func(string, string) {}, funcr.Options{})
	}
	rec, err := events.NewRecorder(log, webhook, reportingController, events.WithRetryMax(retryMax))
	if err != nil {
		return nil, fmt.Errorf("flux events: %w", err)
	}
	sent, err := simplelru.NewLRU[eventKey, struct{}](defaultRemember, nil)
	if err != nil {
		return nil, fmt.Errorf("flux events: %w", err)
	}
	idle := make(chan struct{})
	close(idle)
	return &Notifier{
		rec:       rec,
		log:       log,
		maxQueued: defaultMaxQueued,
		sent:      sent,
		idle:      idle,
	}, nil
}

// Publish implements outcome.Sink: a Reconciled outcome is sent as Notify
// sends it, its message shortened (shortDescription). Other outcomes are
// not sent.
func (n *Notifier) Publish(ctx context.Context, o outcome.Outcome) {
	if o.Action != outcome.Reconciled {
		return
	}
	n.Notify(ctx, o.StatefulSet, o.Source, string(o.State), o.Reason, outcome.ShortDescription(o.Message))
}

// Forget implements outcome.Sink: it drops the events remembered for the
// StatefulSet. It walks the whole memory (bounded by defaultRemember),
// which is cheap for a call made when a StatefulSet goes away.
func (n *Notifier) Forget(statefulSet types.NamespacedName) {
	name := statefulSet.String()
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, k := range n.sent.Keys() {
		if k.statefulSet == name {
			n.sent.Remove(k)
		}
	}
}

// Notify sends one event about the Kustomization src names when src, the
// proposal the rollout of sts works towards, is a Kustomization with
// a revision; it returns false (sending nothing) otherwise. The StatefulSet's
// labels are not read: whoever may edit it could name any Kustomization
// there, and Providers post the event with that Kustomization's credentials.
// A rollout of the StatefulSet's own templates, or one another tool
// proposed, gets no event.
//
// src.Revision is the Flux revision of the commit the rollout reports on,
// e.g. main@sha1:<sha>. state is one of pending, success (severity info),
// failure or error (severity error); reason is the rollout's condition
// reason and becomes the event reason (the description of the commit status
// Flux posts); the message is "<namespace>/<statefulset>: <description>".
//
// The same (Kustomization, StatefulSet, revision, state, description) is
// never sent twice: Notify returns false for a repeat. It also returns false,
// remembering nothing, when ctx is done, state is unknown, or the queue is
// full. true means the event was queued; it is sent in the background and a
// delivery error is logged, not returned: retrying is the recorder's (a few
// attempts) and then notification-controller's business.
func (n *Notifier) Notify(ctx context.Context, sts types.NamespacedName, src v1alpha1.Source, state, reason, description string) bool {
	if src.Kind != KustomizationKind || src.Namespace == "" || src.Name == "" || src.Revision == "" {
		return false
	}
	eventType, ok := eventTypeOf(state)
	if !ok {
		n.log.Error(nil, "not sending a Flux event for an unknown rollout state", "state", state,
			"statefulset", sts.String())
		return false
	}
	if ctx.Err() != nil {
		return false
	}

	statefulSet := sts.String()
	key := eventKey{
		kustomization: src.Namespace + "/" + src.Name,
		statefulSet:   statefulSet,
		revision:      src.Revision,
		state:         state,
		description:   description,
	}
	metadata := map[string]string{
		MetaRevision:        src.Revision,
		MetaToken:           state,
		MetaState:           state,
		MetaStatefulSet:     statefulSet,
		MetaFluxState:       state,
		MetaFluxStatefulSet: statefulSet,
	}
	if sha, ok := proposal.ParseRevision(src.Revision); ok {
		metadata[MetaCommit] = sha
	}
	ev := outgoing{
		// A reference, not a Kustomization object: the recorder uses a
		// *corev1.ObjectReference as it is, so neither the Kustomization
		// API types nor a scheme are needed. notification-controller uses
		// kind, namespace and name to select Alerts, the API group to keep
		// metadata, and kind and name for the commit status context.
		kustomization: corev1.ObjectReference{
			Kind:       KustomizationKind,
			APIVersion: kustomizationAPIVersion,
			Namespace:  src.Namespace,
			Name:       src.Name,
		},
		eventType: eventType,
		reason:    reason,
		message:   statefulSet + ": " + description,
		metadata:  metadata,
	}

	n.mu.Lock()
	defer n.mu.Unlock()
	// Get marks a repeat recently seen, so it stays remembered.
	if _, dup := n.sent.Get(key); dup {
		return false
	}
	if len(n.queue) >= n.maxQueued {
		n.log.Error(nil, "dropping a Flux event: too many events wait for notification-controller",
			"queued", len(n.queue), "kustomization", key.kustomization, "statefulset", statefulSet,
			"revision", src.Revision, "state", state)
		return false
	}
	n.sent.Add(key, struct{}{})
	n.queue = append(n.queue, ev)
	if !n.sending {
		n.sending = true
		n.idle = make(chan struct{})
		go n.drain()
	}
	return true
}

// Flush waits until every event queued so far has been handed to
// notification-controller (or given up on), or until ctx is done. Call it on
// shutdown so that the last outcomes are not lost.
func (n *Notifier) Flush(ctx context.Context) error {
	n.mu.Lock()
	idle := n.idle
	n.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drain sends the queue in order and exits when it is empty, so that an idle
// Notifier holds no goroutine.
func (n *Notifier) drain() {
	for {
		n.mu.Lock()
		if len(n.queue) == 0 {
			n.sending = false
			close(n.idle)
			n.mu.Unlock()
			return
		}
		ev := n.queue[0]
		n.queue[0] = outgoing{}
		n.queue = n.queue[1:]
		n.mu.Unlock()

		// "%s" because the message is data: a description holding "%"
		// must not be read as a format. The recorder logs its own errors
		// ("unable to record event") through the Notifier's logger.
		n.rec.AnnotatedEventf(&ev.kustomization, nil, ev.metadata, ev.eventType, ev.reason, eventAction, "%s", ev.message)
	}
}

// eventTypeOf maps a rollout state to the Kubernetes event type the recorder
// turns into the Flux severity: Normal to info, Warning to error.
// notification-controller's Git providers post info as success and error as
// failure; they have no pending state.
func eventTypeOf(state string) (string, bool) {
	switch state {
	case "pending", "success":
		return corev1.EventTypeNormal, true
	case "failure", "error":
		return corev1.EventTypeWarning, true
	}
	return "", false
}
