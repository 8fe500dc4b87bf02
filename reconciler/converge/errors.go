package converge

import (
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ErrRecreatedElsewhere is returned (wrapped) when, after our orphan delete, the
// StatefulSet reappeared under the same name with a UID we did not create, for
// example because Flux or Argo CD re-applied it. The journal record is cleared
// and nothing is created, so the caller must not retry: the object now belongs
// to whoever re-created it. Test with errors.Is.
var ErrRecreatedElsewhere = errors.New("statefulset was re-created by someone else")

// ErrJournalRejected is returned (wrapped) by Resume for a record that is not
// provably this controller's: no MAC or one that does not verify, another
// name, not a StatefulSet. Nothing is created and the record stays for a
// person to inspect; retrying cannot help. Test with errors.Is.
var ErrJournalRejected = errors.New("journal record rejected")

// Texts the API server uses. v1.27+ validates volumeClaimTemplates as an
// immutable field; older servers forbade every spec change outside an allow-list
// with one Forbidden cause on "spec" (the list of fields grew over releases, so
// only the stable prefix is matched). This file is the one place that reads
// them: the core as errors, the integrations as the messages GitOps tools
// relay.
const (
	immutableText     = "field is immutable"
	oldForbiddenText  = "updates to statefulset spec for fields other than"
	templatesField    = "spec.volumeClaimTemplates"
	immutableValueTag = "Invalid value"
)

// IsImmutableTemplateError reports whether err is the API server refusing a
// change of spec.volumeClaimTemplates, in the text of either current or older
// servers. Wrapped errors are unwrapped. Errors that only carry a message (a
// GitOps tool relaying the server's answer in a status condition, turned into an
// error) are recognised by their text.
func IsImmutableTemplateError(err error) bool {
	if err == nil {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		st := status.Status()
		if st.Details != nil && len(st.Details.Causes) > 0 {
			for _, c := range st.Details.Causes {
				if isTemplateCause(c) {
					return true
				}
			}
			return false
		}
		return IsTemplatesImmutableMessage(st.Message)
	}
	return IsTemplatesImmutableMessage(err.Error())
}

// isTemplateCause matches one structured cause of a 422 answer.
func isTemplateCause(c metav1.StatusCause) bool {
	switch {
	case strings.HasPrefix(c.Field, templatesField) && strings.Contains(c.Message, immutableText):
		return true
	case c.Field == "spec" && strings.Contains(c.Message, oldForbiddenText):
		return true
	}
	return false
}

// IsTemplatesImmutableMessage reports whether msg holds the API server's
// refusal to change spec.volumeClaimTemplates as text, in the wording of
// either current or older servers, e.g.
// `StatefulSet.apps "web" is invalid: spec.volumeClaimTemplates: Invalid value: [...]: field is immutable`.
// It is for answers that reach claimwarden only as text: a GitOps tool's
// condition or sync result. An immutable field other than the templates is
// not a refusal claimwarden can resolve, so it does not match.
func IsTemplatesImmutableMessage(msg string) bool {
	if strings.Contains(msg, oldForbiddenText) {
		return true
	}
	return strings.Contains(msg, templatesField+": "+immutableValueTag) && strings.Contains(msg, immutableText)
}

// onlyImmutableCauses reports whether an update was refused solely because
// immutable spec fields differ, i.e. whether deleting and re-creating the object
// is the remedy. Any other cause (an invalid value, an admission denial) means
// the desired object is wrong and re-creating it would fail too.
func onlyImmutableCauses(err error) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	st := status.Status()
	if st.Details == nil || len(st.Details.Causes) == 0 {
		return IsTemplatesImmutableMessage(st.Message)
	}
	for _, c := range st.Details.Causes {
		immutableSpec := strings.HasPrefix(c.Field, "spec.") && strings.Contains(c.Message, immutableText)
		if !immutableSpec && !isTemplateCause(c) {
			return false
		}
	}
	return true
}
