package check

import (
	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/policies"
)

// SchemaVersion is the version of the JSON report (docs/check.md). It
// changes only when a field changes meaning or goes away; fields are added
// without a change.
const SchemaVersion = 1

// Modes: what the proposal was compared with.
const (
	ModeBase    = "base"    // base manifests stand in for the cluster
	ModeCluster = "cluster" // the live cluster, read-only
)

// StatefulSet statuses.
const (
	StatusChanged   = "changed"   // claims or templates change: verdicts apply
	StatusUnchanged = "unchanged" // nothing a policy is asked about
	StatusNew       = "new"       // not in the base or cluster: claims come from the templates
	StatusIgnored   = "ignored"   // claimwarden leaves it alone (Notes say why)
)

// Verdicts.
const (
	Allowed = "allowed"
	Denied  = "denied"
	// NothingToDo is the report's verdict when no StatefulSet changes.
	NothingToDo = "nothing-to-do"
)

// Report is the plan `claimwarden check` prints: one entry per proposed
// StatefulSet, sorted by namespace and name.
type Report struct {
	SchemaVersion int    `json:"schemaVersion"`
	Mode          string `json:"mode"`
	// PolicyRevision identifies the policy set that decided.
	PolicyRevision string        `json:"policyRevision"`
	Summary        Summary       `json:"summary"`
	StatefulSets   []StatefulSet `json:"statefulSets"`
	// Warnings are about the input, not a claim (policy warnings are on their claim).
	Warnings []Warning `json:"warnings"`
	// Cost sums the StatefulSets' costs; nil without prices or changes.
	Cost *Cost `json:"cost,omitempty"`
}

// Warning is a remark on the input; File and Line are empty when it is
// about no place in particular.
type Warning struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

func (w Warning) String() string {
	if w.File == "" {
		return w.Message
	}
	return manifests.Location{File: w.File, Line: w.Line}.String() + ": " + w.Message
}

// Summary counts the report.
type Summary struct {
	// Verdict is allowed, denied or nothing-to-do.
	Verdict      string `json:"verdict"`
	StatefulSets int    `json:"statefulSets"`
	Changed      int    `json:"changed"`
	Unchanged    int    `json:"unchanged"`
	New          int    `json:"new"`
	Ignored      int    `json:"ignored"`
	// Claims counts the claim changes the policies were asked about;
	// Allowed and Denied split them.
	Claims  int `json:"claims"`
	Allowed int `json:"allowed"`
	Denied  int `json:"denied"`
}

// StatefulSet is the plan of one proposed StatefulSet.
type StatefulSet struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// File and Line say where the proposal wrote it (Line 0 when built).
	File   string `json:"file"`
	Line   int    `json:"line,omitempty"`
	Status string `json:"status"`
	// Strategy is the update strategy the controller would follow.
	Strategy string `json:"strategy"`
	// Verdict is allowed or denied for a changed StatefulSet, else empty.
	Verdict string  `json:"verdict,omitempty"`
	Claims  []Claim `json:"claims,omitempty"`
	// TemplatesAdded and TemplatesRemoved name templates by name; when
	// set, Templates holds the policies' verdict on that.
	TemplatesAdded   []string         `json:"templatesAdded,omitempty"`
	TemplatesRemoved []string         `json:"templatesRemoved,omitempty"`
	Templates        *TemplateVerdict `json:"templates,omitempty"`
	// NewClaims counts claims that do not exist yet (new replicas, new
	// StatefulSets): the StatefulSet controller creates them from the templates.
	NewClaims int `json:"newClaims,omitempty"`
	// Notes explain the status for people.
	Notes []string `json:"notes,omitempty"`
	// CommitStatus is what --post-status posts for it (changed StatefulSets only).
	CommitStatus *CommitStatus `json:"commitStatus,omitempty"`
	// Cost is what the proposal does to its claims' requests and monthly
	// cost; nil without prices or when neither changes.
	Cost *Cost `json:"cost,omitempty"`
}

// Claim is one claim change and its verdict.
type Claim struct {
	Name     string `json:"name"`
	Template string `json:"template"`
	Ordinal  int32  `json:"ordinal"`
	// From is the claim's current request, To the template's.
	From      string `json:"from"`
	To        string `json:"to"`
	FromBytes int64  `json:"fromBytes"`
	ToBytes   int64  `json:"toBytes"`
	// Changes lists what else differs, for people (labels, classes, immutable fields).
	Changes  []string          `json:"changes,omitempty"`
	Verdict  string            `json:"verdict"`
	Denials  []policies.Reason `json:"denials,omitempty"`
	Warnings []policies.Reason `json:"warnings,omitempty"`
}

// TemplateVerdict is the verdict on templates added or removed.
type TemplateVerdict struct {
	Verdict  string            `json:"verdict"`
	Denials  []policies.Reason `json:"denials,omitempty"`
	Warnings []policies.Reason `json:"warnings,omitempty"`
}

// CommitStatus is a commit status as posted.
type CommitStatus struct {
	Context     string `json:"context"`
	State       string `json:"state"`
	Description string `json:"description"`
}

// Denied reports whether any policy denied.
func (r *Report) Denied() bool { return r.Summary.Verdict == Denied }
