package outcome

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// Annotations every event about a proposal carries, as Flux's events carry
// <group>/revision: a receiver (an event exporter, kubectl get events -o
// yaml) can select by commit without parsing the text.
var (
	AnnotationRevision   = v1alpha1.GroupVersion.Group + "/revision"
	AnnotationRepository = v1alpha1.GroupVersion.Group + "/repository"
	AnnotationSource     = v1alpha1.GroupVersion.Group + "/source"
)

// Recorder is the one way claimwarden records Kubernetes events. Made by
// NewRecorder it bounds the events about each object; a Recorder literal
// (tests) records every one.
type Recorder struct {
	events.EventRecorder
	limiter *objectLimiter
}

// Eventf records an event about regarding (related may be nil) with src's
// revision, repository and object in the event's annotations; an empty src
// adds none. The message is a format, as with events.EventRecorder.
func (r Recorder) Eventf(regarding, related runtime.Object, src v1alpha1.Source, eventType, reason, action, format string, args ...any) {
	if r.limiter != nil && !r.limiter.allow(regarding, related) {
		return
	}
	annotated, ok := r.EventRecorder.(events.AnnotatedEventRecorder)
	annotations := SourceAnnotations(src)
	if !ok || len(annotations) == 0 {
		r.EventRecorder.Eventf(regarding, related, eventType, reason, action, format, args...)
		return
	}
	annotated.AnnotatedEventf(regarding, related, annotations, eventType, reason, action, format, args...)
}

// SourceAnnotations are the annotations of an event about src.
func SourceAnnotations(src v1alpha1.Source) map[string]string {
	out := map[string]string{}
	if src.Revision != "" {
		out[AnnotationRevision] = src.Revision
	}
	if src.Repository != "" {
		out[AnnotationRepository] = src.Repository
	}
	if src.Name != "" {
		out[AnnotationSource] = DescribeObject(src)
	}
	return out
}

// DescribeObject names the source object: "Kustomization flux-system/apps".
func DescribeObject(s v1alpha1.Source) string {
	if s.Namespace == "" {
		return s.Kind + " " + s.Name
	}
	return s.Kind + " " + s.Namespace + "/" + s.Name
}

// Describe names the source object and its revision, for people:
// "Kustomization flux-system/apps at main@sha1:…".
func Describe(s v1alpha1.Source) string {
	if s.Revision == "" {
		return DescribeObject(s)
	}
	return DescribeObject(s) + " at " + s.Revision
}
