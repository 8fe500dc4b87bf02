package outcome

import (
	"context"

	lru "github.com/hashicorp/golang-lru/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// DefaultEventMemory bounds the StatefulSets the event sink remembers what
// it said about. Beyond it the least recently reconciled is forgotten,
// which costs at most one repeated event for it.
const DefaultEventMemory = 50_000

// EventSink turns outcomes into the Kubernetes events a person reads with
// kubectl describe: a block (once per distinct message), the completion,
// a superseded revision, a convergence. The events are about the
// StatefulSet, related to its VolumeClaimRollout, and carry the revision.
type EventSink struct {
	recorder Recorder
	// lastTold holds, per StatefulSet, the last state told: the sink's own
	// memory, so a reconcile that read a lagging VolumeClaimRollout from
	// the cache does not say the same thing twice.
	lastTold *lru.Cache[types.NamespacedName, told]
}

type told struct {
	revision string
	state    State
	message  string
}

// NewEventSink returns an EventSink recording through recorder and
// remembering at most memory StatefulSets (DefaultEventMemory when < 1).
func NewEventSink(recorder Recorder, memory int) *EventSink {
	if memory < 1 {
		memory = DefaultEventMemory
	}
	lastTold, err := lru.New[types.NamespacedName, told](memory)
	if err != nil {
		panic(err) // only for a size < 1, excluded above
	}
	return &EventSink{recorder: recorder, lastTold: lastTold}
}

// Publish implements Sink.
func (s *EventSink) Publish(_ context.Context, o Outcome) {
	regarding, related := statefulSetRef(o), rolloutRef(o)
	switch o.Action {
	case Converged:
		s.recorder.Eventf(regarding, related, o.Source, corev1.EventTypeNormal, v1alpha1.ReasonConverged, "Converge",
			"re-created with the volumeClaimTemplates of %s; Pods kept", Describe(o.Source))
		return
	case ConvergeFailed:
		s.recorder.Eventf(regarding, related, o.Source, corev1.EventTypeWarning, v1alpha1.ReasonConvergeFailed, "Converge",
			"re-creating StatefulSet %s with the templates of %s: %s", o.StatefulSet, Describe(o.Source), o.Message)
		return
	}
	last, known := s.lastTold.Get(o.StatefulSet)
	if !known && o.Previous != nil {
		// A restart: what the VolumeClaimRollout recorded was said before.
		last, known = told{revision: o.Previous.Source.Revision, state: o.Previous.State, message: o.Previous.Message}, true
	}
	now := told{revision: o.Source.Revision, state: o.State, message: o.Message}
	s.lastTold.Add(o.StatefulSet, now)
	if known && now == last {
		return
	}
	if known && last.state == Pending && last.revision != "" && now.revision != "" && last.revision != now.revision {
		prev := o.Source
		prev.Revision = last.revision
		s.recorder.Eventf(regarding, related, prev, corev1.EventTypeNormal, v1alpha1.ReasonSuperseded, "Supersede",
			"revision %s %s", last.revision, Superseded(now.revision))
	}
	switch o.State {
	case Failure, Error:
		if !known || last.state != o.State || last.message != o.Message {
			s.recorder.Eventf(regarding, related, o.Source, corev1.EventTypeWarning, o.Reason, "Block", "%s", o.Message)
		}
	case Success:
		// Not on the first sight of a StatefulSet already compatible: nothing completed.
		if known && last.state != Success {
			s.recorder.Eventf(regarding, related, o.Source, corev1.EventTypeNormal, v1alpha1.ReasonCompatible, "Complete", "%s", o.Message)
		}
	}
}

// Forget implements Sink.
func (s *EventSink) Forget(statefulSet types.NamespacedName) {
	s.lastTold.Remove(statefulSet)
}

func statefulSetRef(o Outcome) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: o.StatefulSet.Namespace, Name: o.StatefulSet.Name, UID: o.UID}
}

func rolloutRef(o Outcome) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "VolumeClaimRollout", Namespace: o.StatefulSet.Namespace, Name: o.StatefulSet.Name}
}
