// Package diff compares a StatefulSet's volumeClaimTemplates with its
// PersistentVolumeClaims the way KEP-4650 defines it. It is pure: no clients,
// no clock, no I/O; callers bring the objects.
package diff

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Field names an immutable PVC field that differs between template and claim.
type Field string

// Immutable PVC fields that a patch can never change.
const (
	FieldStorageClass Field = "spec.storageClassName"
	FieldAccessModes  Field = "spec.accessModes"
	FieldVolumeMode   Field = "spec.volumeMode"
	FieldSelector     Field = "spec.selector"
	FieldDataSource   Field = "spec.dataSourceRef"
)

// Mismatch is one immutable field that differs; Live and Desired are rendered for people.
type Mismatch struct {
	Field   Field
	Live    string
	Desired string
}

// ClaimChange is the difference between one live claim (template × ordinal)
// and its template, and whether the claim is compatible with it.
type ClaimChange struct {
	Template string
	Ordinal  int32
	// Name is the claim's name: <template>-<statefulset>-<ordinal>.
	Name string
	// Missing is true when no PVC exists yet; the StatefulSet controller creates it.
	Missing bool

	// TemplateRequest is the template's storage request.
	TemplateRequest resource.Quantity
	// RequestFrom is the PVC's current storage request.
	RequestFrom resource.Quantity
	// RequestTo is max(template, PVC request): storage never shrinks.
	RequestTo resource.Quantity
	// Capacity is the PVC's status.capacity storage (zero when unknown).
	Capacity resource.Quantity
	// TemplateBytes, FromBytes, ToBytes and CapacityBytes are
	// TemplateRequest, RequestFrom, RequestTo and Capacity in whole bytes
	// (see Bytes); FromBytes is 0 for a missing claim, CapacityBytes 0 when
	// not reported. Sizes are compared only in these, and the policies see them.
	TemplateBytes, FromBytes, ToBytes, CapacityBytes int64

	// VACFrom is the PVC's spec.volumeAttributesClassName, VACTo what a patch
	// sets: the template's, or VACFrom when the storage classes differ or the
	// template has none (an applied class cannot be cleared). "" is stored as nil.
	VACFrom, VACTo *string
	// CurrentVAC is status.currentVolumeAttributesClassName.
	CurrentVAC *string
	// VACUnsupported is the template's class when the API server serves no
	// VolumeAttributesClasses (Input.NoVolumeAttributesClasses) and the
	// claim is not on it: it is reported, not patched nor waited for.
	VACUnsupported *string

	// Labels and Annotations are the template's entries (GitOps tracking keys
	// removed) that the PVC lacks or has with another value.
	Labels, Annotations map[string]string

	// Immutable lists immutable fields that differ: such a claim is never patched.
	Immutable []Mismatch

	// Compatible is KEP-4650's compatibility: immutable fields equal, labels and
	// annotations a superset, capacity ≥ template request, current VAC = template VAC
	// (when the template sets one).
	Compatible bool
	// OverSized: the PVC requests more than its template (compatible, never shrunk).
	OverSized bool
	// ResizeError is the message of a failed expansion reported on the PVC
	// (ControllerResizeError / NodeResizeError conditions, or an infeasible
	// allocatedResourceStatuses entry); empty when none.
	ResizeError string
	// Recovery is true when a patch lowers the request to the template to
	// recover from a failed expansion, as KEP-1790 allows: the expansion to
	// the PVC's request failed (ResizeError), and the template asks for less
	// than that request but more than the capacity (the API server refuses
	// a request at or below status.capacity). RequestTo is then the
	// template's request; any other smaller template is never applied.
	Recovery bool
	// Recovering is true when the PVC requests less than its
	// status.allocatedResources and more than its capacity: the request was
	// lowered after a larger expansion was attempted and the resizer has not
	// taken the lower one up yet, so a ResizeError is the larger attempt's.
	Recovering bool
	// RecoveredFrom is the request whose failed expansion claimwarden
	// recovered the claim from (v1alpha1.RecoveredFromAnnotation); empty
	// when none.
	RecoveredFrom string
	// ModifyError is the message of a failed volume attributes class change
	// (ModifyVolumeError condition, or an Infeasible modifyVolumeStatus); empty
	// when none. Like ResizeError it leaves the claim stuck until people act.
	ModifyError string
	// NodeResizePending is true when the storage expanded the volume and
	// the file system grows on the node only once the volume is mounted
	// again (FileSystemResizePending, or allocatedResourceStatuses
	// NodeResizePending): for many drivers, when the Pod restarts.
	NodeResizePending bool
	// Reasons say, for people, why the claim is not compatible.
	Reasons []string
}

// NeedsPatch reports whether an in-place patch would change the PVC's spec or metadata.
func (c ClaimChange) NeedsPatch() bool {
	if c.Missing || len(c.Immutable) > 0 {
		return false
	}
	return c.ToBytes != c.FromBytes || !equalPtr(c.VACFrom, c.VACTo) ||
		len(c.Labels) > 0 || len(c.Annotations) > 0
}

func equalPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// Result is the diff of one StatefulSet.
type Result struct {
	Claims []ClaimChange
	// TemplatesAdded and TemplatesRemoved name templates that appear in the desired
	// StatefulSet but not in the live one, or the other way round. They are reported,
	// never acted on (KEP-4650: an orphan-recreated StatefulSet would then fail on
	// its adopted Pods). Without Input.LiveTemplates they are inferred: a
	// template is added when Pods its status counts lack its claims, removed
	// when claims of a template it no longer has remain.
	TemplatesAdded, TemplatesRemoved []string
}

// Input is everything the diff reads.
type Input struct {
	// Desired is the StatefulSet whose templates are the desired state.
	Desired *appsv1.StatefulSet
	// LiveTemplates are the templates of the live StatefulSet when it differs
	// from Desired (a GitOps proposal); nil means Desired is the live object,
	// status included.
	// Use LiveTemplatesOf: a live object without templates must give an
	// empty, non-nil list, or templates a proposal adds go unseen.
	LiveTemplates []corev1.PersistentVolumeClaim
	// PVCs are the namespace's claims; those not belonging to Desired are ignored.
	PVCs []corev1.PersistentVolumeClaim
	// IgnoreLabels are template label keys never copied onto claims besides
	// the GitOps tracking keys: labels a build tool injects into every
	// template (kustomize commonLabels) describe the build, not the volume.
	IgnoreLabels []string
	// MaxClaims bounds templates × replicas; a StatefulSet with more claims
	// is refused before any work. Values below 1 mean DefaultMaxClaims.
	MaxClaims int
	// NoVolumeAttributesClasses says the API server serves no
	// VolumeAttributesClasses: a template's class can never be applied (the
	// server drops it from a patch), so it is neither patched nor waited
	// for, and the claim reports it (ClaimChange.VACUnsupported).
	NoVolumeAttributesClasses bool
}

// DefaultMaxClaims is the default of Input.MaxClaims. Every claim is an
// entry of the VolumeClaimRollout's status, which must stay well below the
// API server's 1.5 MiB object limit: an entry takes up to about 600 bytes
// (name, sizes, phase, a message), so 1000 claims stay under 0.6 MiB.
// StatefulSets of more claims are rare and can raise the limit.
const DefaultMaxClaims = 1000
