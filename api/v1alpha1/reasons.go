package v1alpha1

// PoliciesReadyCondition says whether the policy set that gates the rollout
// is healthy: compiled, every bundle loaded, none stale.
const PoliciesReadyCondition = "PoliciesReady"

// SourceReadyCondition says whether the GitOps source that proposes the
// StatefulSet (a Flux Kustomization's artifact, an Argo CD Application's
// manifests) could be read; while it cannot, the last proposal stands.
const SourceReadyCondition = "SourceReady"

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
	// ReasonModifyFailed: the storage reported a failed (infeasible)
	// VolumeAttributesClass change.
	ReasonModifyFailed = "VolumeModifyFailed"
	// ReasonImmutableField: a template differs from a claim in a field no
	// patch can change.
	//
	// Deprecated: such a claim is now denied by policy id immutable-field
	// (ReasonPolicyDenied), so that the rest of the proposal is not done
	// without it; no longer set.
	ReasonImmutableField = "ImmutableFieldChanged"
	// ReasonTemplatesChanged: templates were added or removed (reported, not acted on).
	ReasonTemplatesChanged = "TemplatesAddedOrRemoved"
	// ReasonInvalidTemplate: a volumeClaimTemplate cannot be evaluated.
	ReasonInvalidTemplate = "InvalidTemplate"
	// ReasonInvalidAnnotation: a claimwarden annotation has an invalid value.
	ReasonInvalidAnnotation = "InvalidAnnotation"
	// ReasonSourceRead: the GitOps source was fetched and built.
	ReasonSourceRead = "SourceRead"
	// ReasonSourceUnavailable: the GitOps source could not be fetched or built.
	ReasonSourceUnavailable = "SourceUnavailable"
	// ReasonConverged: the StatefulSet was re-created with the proposed
	// templates, its Pods kept (an event reason).
	ReasonConverged = "StatefulSetConverged"
	// ReasonConvergeFailed: re-creating the StatefulSet failed (an event reason).
	ReasonConvergeFailed = "ConvergeFailed"
	// ReasonSuperseded: a newer revision replaced the proposal before its
	// rollout finished (an event reason; its commit status says so).
	ReasonSuperseded = "Superseded"
	// ReasonClaimPatched: a claim was patched (an event reason).
	ReasonClaimPatched = "ClaimPatched"
	// ReasonWaitingForClaims: the strategy leaves existing claims until they are deleted.
	ReasonWaitingForClaims = "WaitingForClaimDeletion"
	// ReasonWaitingForPods: the StatefulSet's updateStrategy OnDelete
	// holds claims until their Pods are deleted (KEP-4650).
	ReasonWaitingForPods = "WaitingForPodDeletion"
	// ReasonPartitioned: the StatefulSet's rolling-update partition holds
	// the claims of the ordinals below it until it moves.
	ReasonPartitioned = "Partitioned"
	// ReasonWaitingForRestart: claims wait for their Pods to restart so that
	// their file systems grow; claimwarden restarts none (not opted in, or
	// the policies refuse) or waits for one it restarted.
	ReasonWaitingForRestart = "WaitingForRestart"
	// ReasonPodEvicted: claimwarden evicted a Pod whose claims wait for it
	// (an event reason).
	ReasonPodEvicted = "PodEvicted"
	// ReasonRestartRefused: the policies refused the restart of a Pod whose
	// claims wait for it (an event reason).
	ReasonRestartRefused = "RestartRefused"
	// ReasonJournalRejected: status.pendingRecreate is not the controller's
	// own sealed record; nothing is re-created from it.
	ReasonJournalRejected = "JournalRejected"
	// ReasonNotAuthorized: the proposal's authority (the GitOps tool's
	// service account) may not make a write the rollout needs; nothing was
	// written.
	ReasonNotAuthorized = "NotAuthorized"
)
