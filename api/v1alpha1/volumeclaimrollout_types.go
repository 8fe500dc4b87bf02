package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Kind is the kind of the VolumeClaimRollout.
const Kind = "VolumeClaimRollout"

// Annotations and labels read from StatefulSets.
const (
	// IgnoreAnnotation set to "true" on a StatefulSet opts it out of claimwarden.
	IgnoreAnnotation = "claimwarden.dev/ignore"
	// UpdateStrategyAnnotation overrides the configured update strategy of one StatefulSet.
	UpdateStrategyAnnotation = "claimwarden.dev/update-strategy"
	// RepositoryAnnotation and RevisionAnnotation name the Git repository and
	// the commit that proposed the StatefulSet, for those who apply manifests
	// from a pipeline; commit statuses are posted on that commit.
	RepositoryAnnotation = "claimwarden.dev/repository"
	RevisionAnnotation   = "claimwarden.dev/revision"
	// RestartForExpansionAnnotation set to "true" on a StatefulSet lets
	// claimwarden evict its Pods, one at a time, whose claims wait for a
	// file system resize that needs the volume mounted again; "false" keeps
	// it from doing so whatever the configuration says.
	RestartForExpansionAnnotation = "claimwarden.dev/restart-for-expansion"
	// AutoresizeAnnotation set to "true" on a StatefulSet of a namespace
	// the configuration lets autoresize propose for (autoresize.namespaces)
	// opts it in; "false" opts it out of a namespace opted in as a whole.
	AutoresizeAnnotation = "claimwarden.dev/autoresize"
	// SizeValueAnnotation names, as a dotted path (persistence.size), the
	// Helm value that sets a claim template's size, where rendering the
	// chart cannot tell which value it is.
	SizeValueAnnotation = "claimwarden.dev/size-value"
)

// RecoveredFromAnnotation is written on a claim whose request claimwarden
// lowered to recover from a failed expansion (KEP-1790): its value is the
// request whose expansion had failed. The storage keeps no trace of the
// failure once the lower size is reached, so this is how the rollout still
// says what happened; the claim's next patch drops it.
const RecoveredFromAnnotation = "claimwarden.dev/recovered-from"

// AdoptionNudgedAnnotation is written on a StatefulSet whose Pods or
// ControllerRevisions the StatefulSet controller had still not adopted long
// after it observed the object (seen after an etcd restart: its sync of the
// re-created object was dropped and nothing made it sync again). The write
// is the nudge, a metadata-only update that makes the StatefulSet controller
// sync the object and adopt them; the value is when (RFC 3339), so that the
// nudge is repeated at most once per Options.AdoptionNudgeAfter.
const AdoptionNudgedAnnotation = "claimwarden.dev/adoption-nudged-at"

// UpdateStrategy says how existing claims follow a changed template (KEP-4650).
// +kubebuilder:validation:Enum=InPlace;OnClaimDelete
type UpdateStrategy string

const (
	// InPlace patches existing claims where only mutable fields differ.
	InPlace UpdateStrategy = "InPlace"
	// OnClaimDelete leaves existing claims alone; only new claims get the new template.
	OnClaimDelete UpdateStrategy = "OnClaimDelete"
)

// ClaimPhase is where one claim is in its rollout.
// +kubebuilder:validation:Enum=Pending;Denied;Patching;Resizing;WaitingForRestart;Compatible;Failed
type ClaimPhase string

const (
	// ClaimPending waits for its turn (or for its PVC to be created).
	ClaimPending ClaimPhase = "Pending"
	// ClaimDenied cannot be changed: a policy or an immutable field says no.
	ClaimDenied ClaimPhase = "Denied"
	// ClaimPatching has a patch being written.
	ClaimPatching ClaimPhase = "Patching"
	// ClaimResizing is patched and waits for the storage to report the new capacity.
	ClaimResizing ClaimPhase = "Resizing"
	// ClaimWaitingForRestart is expanded by the storage, but its file system
	// grows only when the volume is mounted again (FileSystemResizePending,
	// or allocatedResourceStatuses NodeResizePending): it waits for its Pod
	// to restart.
	ClaimWaitingForRestart ClaimPhase = "WaitingForRestart"
	// ClaimCompatible matches its template as KEP-4650 defines it.
	ClaimCompatible ClaimPhase = "Compatible"
	// ClaimFailed was rejected by the API server or its resize failed.
	ClaimFailed ClaimPhase = "Failed"
)

// VolumeClaimRolloutSpec is empty: the StatefulSet of the same name is the desired state.
type VolumeClaimRolloutSpec struct{}

// Source is where a proposal came from.
type Source struct {
	// Kind of the source object, e.g. StatefulSet, Kustomization or Application.
	Kind string `json:"kind"`
	// Namespace of the source object; empty for a cluster-scoped one.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the source object.
	Name string `json:"name"`
	// Repository URL the revision belongs to, when known.
	// +optional
	Repository string `json:"repository,omitempty"`
	// Revision (commit) that proposed the templates, when known.
	// +optional
	Revision string `json:"revision,omitempty"`
	// Chart is the Helm chart (name@version) the templates were rendered
	// from, for a Helm source.
	// +optional
	Chart string `json:"chart,omitempty"`
}

// Proposal is the desired state the rollout works towards.
type Proposal struct {
	// Source is the object that proposed the templates: the GitOps tool's
	// (a Flux Kustomization or HelmRelease, an Argo CD Application, a Helm
	// release), or the StatefulSet itself when no tool applies it.
	Source Source `json:"source"`
	// TemplatesHash identifies the desired volumeClaimTemplates.
	TemplatesHash string `json:"templatesHash"`
	// IgnoredLabels are template label keys the source's build injects into
	// every template (kustomize commonLabels); they are never copied onto claims.
	// +optional
	IgnoredLabels []string `json:"ignoredLabels,omitempty"`
	// Authority is the identity the proposal's writes are authorised as
	// (the GitOps tool's service account); absent when the tool applies as
	// itself, and for the StatefulSet's own templates.
	// +optional
	Authority *Identity `json:"authority,omitempty"`
}

// Identity is a user as the API server authenticates it: every write
// claimwarden makes for a proposal must be one this identity may make.
type Identity struct {
	// User is the user name, e.g. system:serviceaccount:flux-system:kustomize-controller.
	User string `json:"user"`
	// Groups are the user's groups.
	// +optional
	Groups []string `json:"groups,omitempty"`
}

// ClaimStatus is the state of one claim (template × ordinal).
type ClaimStatus struct {
	// Name of the PersistentVolumeClaim.
	Name string `json:"name"`
	// Template is the name of the volumeClaimTemplate the claim follows.
	Template string `json:"template"`
	// Ordinal is the StatefulSet replica the claim belongs to.
	Ordinal int32 `json:"ordinal"`
	// From is the claim's storage request before the rollout.
	// +optional
	From string `json:"from,omitempty"`
	// To is the storage request the rollout brings it to.
	// +optional
	To string `json:"to,omitempty"`
	// Phase is where the claim is in its rollout: Pending, Denied,
	// Patching, Resizing, WaitingForRestart, Compatible or Failed.
	Phase ClaimPhase `json:"phase"`
	// OverSized is true when the claim is larger than its template (never shrunk).
	// +optional
	OverSized bool `json:"overSized"`
	// Message says why the claim is in its phase: the policy that denied
	// it, the API server's refusal, what it waits for.
	// +optional
	Message string `json:"message,omitempty"`
}

// Counts summarise the claims of a rollout. Every count defaults to 0 in the
// schema: status is written as a merge patch, which leaves out a count that
// was 0 before and after, and the printer columns would show blanks.
type Counts struct {
	// Total counts the claims of the StatefulSet's templates and replicas.
	// +optional
	// +kubebuilder:default=0
	Total int32 `json:"total"`
	// Compatible counts claims that match their template (KEP-4650).
	// +optional
	// +kubebuilder:default=0
	Compatible int32 `json:"compatible"`
	// Updating counts claims being patched or resized.
	// +optional
	// +kubebuilder:default=0
	Updating int32 `json:"updating"`
	// WaitingForRestart counts claims whose file system grows only when
	// their Pod restarts (phase WaitingForRestart).
	// +optional
	// +kubebuilder:default=0
	WaitingForRestart int32 `json:"waitingForRestart"`
	// Denied counts claims a policy or an immutable field keeps as they are.
	// +optional
	// +kubebuilder:default=0
	Denied int32 `json:"denied"`
	// Failed counts claims the API server refused, or whose resize failed.
	// +optional
	// +kubebuilder:default=0
	Failed int32 `json:"failed"`
	// OverSized counts claims larger than their template (never shrunk).
	// +optional
	// +kubebuilder:default=0
	OverSized int32 `json:"overSized"`
	// Capacity is the sum of the claims' status capacity.
	// +optional
	Capacity string `json:"capacity,omitempty"`
}

// CommitStatus is a commit status claimwarden posted.
type CommitStatus struct {
	// Repository is the URL of the repository the revision belongs to.
	Repository string `json:"repository"`
	// Revision is the commit the status is on.
	Revision string `json:"revision"`
	// Context is the status context, e.g. claimwarden/shop/web.
	Context string `json:"context"`
	// State is pending, success, failure or error.
	State string `json:"state"`
	// Description is the status's text, as the Git host shows it.
	// +optional
	Description string `json:"description,omitempty"`
	// PostedAt is when it was posted.
	PostedAt metav1.Time `json:"postedAt"`
}

// PendingRecreate records a StatefulSet that is being orphan-deleted and re-created,
// written before the delete so that a restarted controller finishes the job.
// The controller acts on a record only if its MAC verifies: whoever may write
// this status cannot make the controller create a StatefulSet.
type PendingRecreate struct {
	// UID of the StatefulSet being deleted.
	UID string `json:"uid"`
	// Object is the StatefulSet to create, server-set fields dropped.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Object runtime.RawExtension `json:"object"`
	// Version of the record's format, covered by the MAC.
	// +optional
	Version int32 `json:"version,omitempty"`
	// MAC is the controller's HMAC-SHA256 (base64) over the version, the
	// StatefulSet's namespace and name, UID and Object, keyed by the Secret
	// named by the journalKey configuration.
	// +optional
	MAC string `json:"mac,omitempty"`
}

// PodRestart is one Pod restart for claims waiting for their file system resize.
type PodRestart struct {
	// Pod is the name of the Pod being restarted.
	Pod string `json:"pod"`
	// UID of the Pod that is evicted; its replacement has another.
	UID string `json:"uid"`
	// Ordinal of the Pod, whose claims wait for the restart.
	Ordinal int32 `json:"ordinal"`
	// Since is when claimwarden decided on the restart.
	Since metav1.Time `json:"since"`
}

// VolumeClaimRolloutStatus reports the rollout.
type VolumeClaimRolloutStatus struct {
	// ObservedGeneration is the StatefulSet generation last reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Strategy is how existing claims follow a changed template: InPlace
	// (patched where only mutable fields differ) or OnClaimDelete (left
	// alone; new claims get the new template).
	// +optional
	Strategy UpdateStrategy `json:"strategy,omitempty"`
	// Proposal is what was proposed: the templates the rollout works
	// towards, and who proposed them.
	// +optional
	Proposal *Proposal `json:"proposal,omitempty"`
	// Claims are what was decided and done for each claim.
	// +optional
	Claims []ClaimStatus `json:"claims,omitempty"`
	// Counts summarise the claims; {} by default, so that the defaults of
	// the counts apply however little a status write includes.
	// +optional
	// +kubebuilder:default={}
	Counts Counts `json:"counts,omitempty"`
	// Progress reads "compatible/total" for the printer columns.
	// +optional
	Progress string `json:"progress,omitempty"`
	// Problems are differences claimwarden reports but does not act on.
	// +optional
	Problems []string `json:"problems,omitempty"`
	// PendingRecreate is the StatefulSet being re-created (orphan delete
	// and create), kept until the new one exists.
	// +optional
	PendingRecreate *PendingRecreate `json:"pendingRecreate,omitempty"`
	// Restart is the Pod claimwarden evicts so that its claims' file systems
	// grow, recorded before the eviction: at most one per StatefulSet, kept
	// until that Pod is back and its claims no longer wait for it, so that
	// a restarted controller never evicts a second Pod meanwhile.
	// +optional
	Restart *PodRestart `json:"restart,omitempty"`
	// LastCommitStatus is the last commit status posted for this rollout.
	// +optional
	LastCommitStatus *CommitStatus `json:"lastCommitStatus,omitempty"`
	// Autoresize is what autoresize last read and proposed, for a
	// StatefulSet it watches.
	// +optional
	Autoresize *AutoresizeStatus `json:"autoresize,omitempty"`
	// Conditions are kstatus' Ready (the claims match the proposal; its
	// reason and message say why not), Reconciling and Stalled (the
	// rollout cannot go on without a person), and PoliciesReady and
	// SourceReady.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AutoresizeStatus is how full a StatefulSet's volumes are and the pull
// request that grows them, as autoresize last saw them.
type AutoresizeStatus struct {
	// Usage is the fullest claim's, e.g. "85% data-web-0".
	// +optional
	Usage string `json:"usage,omitempty"`
	// PullRequest is the URL of the resize's pull request.
	// +optional
	PullRequest string `json:"pullRequest,omitempty"`
	// State is where the pull request stands: open, merged or closed.
	// +optional
	State string `json:"state,omitempty"`
	// Proposed is what the pull request sets, e.g. "data 13Gi".
	// +optional
	Proposed string `json:"proposed,omitempty"`
	// Commit is the commit claimwarden made on the pull request's branch:
	// an open pull request whose head is another is rebuilt.
	// +optional
	Commit string `json:"commit,omitempty"`
	// Message says what autoresize did last, or why it proposes nothing.
	// +optional
	Message string `json:"message,omitempty"`
	// LastChecked is when a check last found something else than the rest
	// of this status says; a check that finds the same writes nothing.
	// +optional
	LastChecked metav1.Time `json:"lastChecked,omitempty"`
}

// VolumeClaimRollout brings one StatefulSet's PVCs to its volumeClaimTemplates.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=vcr
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Compatible",type=string,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="Updating",type=integer,JSONPath=`.status.counts.updating`
// +kubebuilder:printcolumn:name="Denied",type=integer,JSONPath=`.status.counts.denied`
// +kubebuilder:printcolumn:name="OverSized",type=integer,JSONPath=`.status.counts.overSized`
// +kubebuilder:printcolumn:name="Capacity",type=string,JSONPath=`.status.counts.capacity`
// +kubebuilder:printcolumn:name="Usage",type=string,JSONPath=`.status.autoresize.usage`
// +kubebuilder:printcolumn:name="PullRequest",type=string,JSONPath=`.status.autoresize.pullRequest`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Strategy",type=string,JSONPath=`.status.strategy`,priority=1
// +kubebuilder:printcolumn:name="SourceKind",type=string,JSONPath=`.status.proposal.source.kind`,priority=1
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.status.proposal.source.name`,priority=1
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.proposal.source.revision`,priority=1
type VolumeClaimRollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VolumeClaimRolloutSpec   `json:"spec,omitempty"`
	Status VolumeClaimRolloutStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions (fluxcd/pkg/runtime conditions.Getter).
func (in *VolumeClaimRollout) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions sets the status conditions (fluxcd/pkg/runtime conditions.Setter).
func (in *VolumeClaimRollout) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// VolumeClaimRolloutList is a list of VolumeClaimRollouts.
// +kubebuilder:object:root=true
type VolumeClaimRolloutList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VolumeClaimRollout `json:"items"`
}
