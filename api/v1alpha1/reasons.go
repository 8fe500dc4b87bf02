package v1alpha1

// PoliciesReadyCondition says whether the policy set that gates the rollout
// is healthy: compiled, every bundle loaded, none stale.
const PoliciesReadyCondition = "PoliciesReady"

// Condition reasons on a VolumeClaimRollout (the conditions themselves are
// kstatus' Ready, Reconciling and Stalled from fluxcd/pkg/apis/meta).
const (
	// ReasonCompatible: every claim matches its template.
	ReasonCompatible = "ClaimsCompatible"
	// ReasonProgressing: claims are being patched or resized.
	ReasonProgressing = "Progressing"
	// ReasonPolicyDenied: a policy denied a claim change or the StatefulSet change.
	ReasonPolicyDenied = "PolicyDenied"
	// ReasonPoliciesLoaded: the policies compiled and every source is current.
	ReasonPoliciesLoaded = "PoliciesLoaded"
	// ReasonPoliciesStale: a bundle could not be fetched; its last good version decides.
	ReasonPoliciesStale = "PoliciesStale"
	// ReasonPoliciesBroken: the policies do not compile or a bundle never loaded; every change is denied.
	ReasonPoliciesBroken = "PoliciesBroken"
	// ReasonPatchRejected: the API server refused a claim patch.
	ReasonPatchRejected = "PatchRejected"
	// ReasonResizeFailed: the storage reported a failed expansion.
	ReasonResizeFailed = "ResizeFailed"
	// ReasonImmutableField: a template differs from a claim in a field no patch can change.
	ReasonImmutableField = "ImmutableFieldChanged"
	// ReasonTemplatesChanged: templates were added or removed (reported, not acted on).
	ReasonTemplatesChanged = "TemplatesAddedOrRemoved"
	// ReasonInvalidTemplate: a volumeClaimTemplate cannot be evaluated.
	ReasonInvalidTemplate = "InvalidTemplate"
	// ReasonInvalidAnnotation: a claimwarden annotation has an invalid value.
	ReasonInvalidAnnotation = "InvalidAnnotation"
	// ReasonWaitingForClaims: the strategy leaves existing claims until they are deleted.
	ReasonWaitingForClaims = "WaitingForClaimDeletion"
)
