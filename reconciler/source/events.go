package source

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// Event reasons the Reconciler uses on tool objects; each tool adds its own.
const (
	ReasonProposed    = "ClaimwardenProposed"
	ReasonNothingToDo = "ClaimwardenNothingToDo"
	// ReasonReadFailed reports a Tool.Desired error that is no ReadError.
	ReasonReadFailed = "ClaimwardenReadFailed"
)

// Event actions.
const (
	ActionPropose = "Propose"
	ActionSkip    = "Skip"
	ActionRead    = "Read"
)

// Annotations of every event about a tool object, as Flux annotates its
// events with the revision: a receiver tells which revision and source an
// event is about without parsing its message.
const (
	AnnotationRevision = "claimwarden.dev/revision"
	AnnotationSource   = "claimwarden.dev/source"
)

// eventf records an event about regarding, annotated with src's revision
// and object when the recorder takes annotations (client-go's and
// controller-runtime's do). The lead's outcome.Eventf is meant to replace
// it once on main.
func eventf(rec events.EventRecorder, regarding runtime.Object, src v1alpha1.Source, eventType, reason, action, note string, args ...any) {
	annotated, ok := rec.(events.AnnotatedEventRecorder)
	if !ok {
		rec.Eventf(regarding, nil, eventType, reason, action, note, args...)
		return
	}
	annotations := map[string]string{}
	if src.Revision != "" {
		annotations[AnnotationRevision] = src.Revision
	}
	if src.Kind != "" {
		annotations[AnnotationSource] = src.Kind + " " + src.Namespace + "/" + src.Name
	}
	annotated.AnnotatedEventf(regarding, nil, annotations, eventType, reason, action, note, args...)
}
