package policies

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// Change kinds: what an evaluation is about.
const (
	// KindClaim is one claim (template × ordinal) whose template differs from the PVC.
	KindClaim = "claim"
	// KindStatefulSet is a StatefulSet-level change, evaluated before a
	// convergence and when templates are added or removed.
	KindStatefulSet = "statefulset"
	// KindAutoresize asks whether a claim whose volume fills should grow,
	// and to what size (rule set resize); input.autoresize says how full.
	KindAutoresize = "autoresize"
)

// Input is the document a policy sees as `input`; docs/policy-input.md shows
// a full example. Params are added by the engine from configuration and are
// also visible as data.claimwarden.params.
type Input struct {
	Change Change `json:"change"`
	// PVC is the live claim; null when it does not exist yet or for KindStatefulSet.
	PVC *corev1.PersistentVolumeClaim `json:"pvc"`
	// StorageClass is the live claim's StorageClass; null when unknown.
	StorageClass *storagev1.StorageClass `json:"storageClass"`
	// Template is the desired volumeClaimTemplate; null for KindStatefulSet.
	Template *corev1.PersistentVolumeClaim `json:"template"`
	// StatefulSet is the desired StatefulSet.
	StatefulSet *appsv1.StatefulSet `json:"statefulSet"`
	// Namespace is the StatefulSet's Namespace (its labels say e.g. tier=prod);
	// null when unknown.
	Namespace *corev1.Namespace `json:"namespace"`
	// ResourceQuotas are the StatefulSet's namespace's ResourceQuotas that
	// limit what claims count against, by name; null when there are none
	// or they are unknown.
	ResourceQuotas []ResourceQuota `json:"resourceQuotas"`
	// Proposal sums the whole proposal (every claim of the StatefulSet)
	// and the others in flight in the namespace, so that a policy decides
	// over the whole rather than claim by claim; null outside a proposal.
	Proposal *Proposal `json:"proposal"`
	// Server is what the API server supports, as far as it is known.
	Server Server `json:"server"`
	// Autoresize is how full the claim's volume is, for KindAutoresize;
	// null otherwise.
	Autoresize *Autoresize    `json:"autoresize"`
	Source     Source         `json:"source"`
	Params     map[string]any `json:"params"`
}

// Autoresize is a claim's volume as the kubelet reports it (through the
// configured Prometheus API) and how it is growing, and the last resize
// proposed for its StatefulSet.
type Autoresize struct {
	CapacityBytes int64 `json:"capacityBytes"`
	UsedBytes     int64 `json:"usedBytes"`
	Inodes        int64 `json:"inodes"`
	InodesUsed    int64 `json:"inodesUsed"`
	// GrowthBytesPerSecond is how fast use grew over the window read.
	GrowthBytesPerSecond float64 `json:"growthBytesPerSecond"`
	// SecondsToFull is when, at that rate, the volume is full; absent when
	// it is not growing.
	SecondsToFull *float64 `json:"secondsToFull,omitempty"`
	// RequestBytes is the claim's request: a resize grows it.
	RequestBytes int64 `json:"requestBytes"`
	// SecondsSinceLastProposal is how long ago the StatefulSet's last
	// autoresize pull request was merged or closed; absent while there is
	// none or it is open (an open one is updated, not duplicated).
	SecondsSinceLastProposal *float64 `json:"secondsSinceLastProposal,omitempty"`
}

// Server is what the API server supports of what a claim change needs,
// read from the server (discovery, a dry run), never from its version; a
// field is absent (nil) while it is not known, e.g. in claimwarden check
// without a cluster.
type Server struct {
	// VolumeAttributesClasses: the server serves VolumeAttributesClasses
	// (GA in 1.34; beta and off by default in 1.31–1.33), so a claim's
	// class can change. Without them the server drops the field from a
	// claim's patch.
	VolumeAttributesClasses *bool `json:"volumeAttributesClasses,omitempty"`
	// RecoverFromFailedExpansion: the server accepts a claim's request
	// lowered towards its capacity after a failed expansion
	// (RecoverVolumeExpansionFailure, KEP-1790: on by default from 1.32).
	RecoverFromFailedExpansion *bool `json:"recoverFromFailedExpansion,omitempty"`
}

// Proposal is what a whole proposal adds to what its namespace's
// ResourceQuotas count, by quota resource: requests.storage and
// <class>.storageclass.storage.k8s.io/requests.storage in bytes,
// persistentvolumeclaims and <class>.storageclass.storage.k8s.io/persistentvolumeclaims
// in claims. A claim's class is its PVC's; a claim the StatefulSet
// controller creates counts with its template's request and class (none
// when the template names none).
type Proposal struct {
	// Growth is what the proposal's claims still have to grow: the claims
	// it patches (only growth; a recovery lowers a request and counts
	// nothing) and the claims it adds. Claims already patched count in
	// the quotas' use instead.
	Growth map[string]int64 `json:"growth"`
	// InFlight is Growth of the other StatefulSets' proposals in the
	// namespace that are allowed and not finished.
	InFlight map[string]int64 `json:"inFlight"`
	// Claims counts the claims that grow.
	Claims int `json:"claims"`
}

// ResourceQuota is a ResourceQuota reduced to the resources a claim counts
// against: requests.storage, persistentvolumeclaims and their per-class
// forms (<class>.storageclass.storage.k8s.io/requests.storage and
// .../persistentvolumeclaims). The rest (cpu, pods, ...) changes with every
// Pod and would change each input's digest for nothing.
type ResourceQuota struct {
	Name string `json:"name"`
	// Scoped is true when the quota has scopes or a scope selector (for
	// claims: a VolumeAttributesClass scope), so it counts some claims only.
	Scoped bool `json:"scoped,omitempty"`
	// Resources are the quota's limits by resource name.
	Resources map[string]QuotaAmount `json:"resources"`
}

// QuotaAmount is a quota's hard limit of one resource and what is used of
// it, as written ("20Gi") and as whole units rounded up, as
// Quantity.Value() rounds. Used is "" and UsedValue 0 while the quota
// controller has not counted yet.
type QuotaAmount struct {
	Hard      string `json:"hard"`
	Used      string `json:"used"`
	HardValue int64  `json:"hardValue"`
	UsedValue int64  `json:"usedValue"`
}

// Change describes what would change.
type Change struct {
	Kind        string `json:"kind"`
	Namespace   string `json:"namespace"`
	StatefulSet string `json:"statefulSet"`
	// Claim, Template and Ordinal identify the claim (KindClaim only).
	Claim    string `json:"claim,omitempty"`
	Template string `json:"template,omitempty"`
	Ordinal  int32  `json:"ordinal"`
	// Storage: from is the PVC's current request, to the template's request
	// (as proposed; the controller never lowers a request whatever the
	// verdict, except in a recovery, see QuantityChange.Recovery).
	Storage *QuantityChange `json:"storage,omitempty"`
	// StorageClassName: from the PVC, to the template; present when the
	// template names a class.
	StorageClassName *StringChange `json:"storageClassName,omitempty"`
	// VolumeAttributesClassName: from the PVC, to the template; present when they differ.
	VolumeAttributesClassName *StringChange `json:"volumeAttributesClassName,omitempty"`
	// Immutable lists immutable fields that differ (never patched).
	Immutable []Mismatch `json:"immutable,omitempty"`
	// Labels and Annotations are the template entries the PVC lacks (GitOps tracking keys excluded).
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// TemplatesAdded and TemplatesRemoved name templates by name (KindStatefulSet).
	TemplatesAdded   []string `json:"templatesAdded,omitempty"`
	TemplatesRemoved []string `json:"templatesRemoved,omitempty"`
	// Recreate is true when the StatefulSet must be re-created (orphan
	// delete and create, Pods kept) to carry a GitOps proposal's templates
	// (KindStatefulSet): a policy may refuse that, e.g. during a freeze.
	Recreate bool `json:"recreate,omitempty"`
	// Restart is true when claimwarden is about to evict Pod so that the
	// claim's file system grows (the storage expanded the volume; the node
	// grows the file system when it is mounted again). Such a question
	// (KindClaim) carries no storage change: the claim was patched already.
	// A policy may refuse it, e.g. during business hours.
	Restart bool `json:"restart,omitempty"`
	// Pod is the Pod to restart (Restart only).
	Pod string `json:"pod,omitempty"`
}

// QuantityChange is a resource quantity before and after, as text and in bytes.
type QuantityChange struct {
	From      string `json:"from"`
	To        string `json:"to"`
	FromBytes int64  `json:"fromBytes"`
	ToBytes   int64  `json:"toBytes"`
	// Capacity and CapacityBytes are the PVC's status.capacity; omitted
	// when not reported.
	Capacity      string `json:"capacity,omitempty"`
	CapacityBytes int64  `json:"capacityBytes,omitempty"`
	// Recovery is true when to is smaller than from because the expansion
	// to from failed and to is above the capacity: lowering the request
	// then recovers the claim (KEP-1790), it shrinks nothing. Every other
	// smaller to is a shrink, never applied.
	Recovery bool `json:"recovery,omitempty"`
}

// StringChange is a value before and after ("" for unset).
type StringChange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Mismatch is an immutable field that differs.
type Mismatch struct {
	Field   string `json:"field"`
	Live    string `json:"live"`
	Desired string `json:"desired"`
}

// Source is where the proposal came from.
type Source struct {
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	Repository string `json:"repository,omitempty"`
	Revision   string `json:"revision,omitempty"`
	// Chart is the Helm chart (name@version) of a Helm source.
	Chart string `json:"chart,omitempty"`
}
