package testenv

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// auditPolicy records, once each request is answered, every write to the
// objects a rollout writes: claims and StatefulSets (and the policy
// reports it writes beside them), the evidence the tests read of how often
// each was written and by whom. Metadata level: the
// request line, user, user agent and response code, not the bodies.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
  resources:
  - group: ""
    resources: ["persistentvolumeclaims"]
  - group: "apps"
    resources: ["statefulsets"]
  - group: "openreports.io"
    resources: ["reports"]
- level: None
`

// auditFlags writes the policy and returns the API server's flags for it.
// The log is a plain file appended to (no --audit-log-max*: no rotation),
// so a restarted API server continues it, and written before the request
// returns (the log backend's default blocking mode).
func (e *Env) auditFlags() ([]string, error) {
	policy := filepath.Join(e.Dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return nil, err
	}
	return []string{
		"--audit-policy-file", policy,
		"--audit-log-path", e.AuditLog(),
		"--audit-log-format", "json",
	}, nil
}

// AuditLog is the API server's audit log, written when Options.Audit is set.
func (e *Env) AuditLog() string { return filepath.Join(e.Dir, "audit.log") }

// AuditEvents reads the audit log and returns the events for which keep
// returns true, in the order the API server answered them.
func (e *Env) AuditEvents(keep func(*auditv1.Event) bool) ([]auditv1.Event, error) {
	if !e.opts.Audit {
		return nil, fmt.Errorf("testenv: no audit log: start the environment with Options.Audit")
	}
	f, err := os.Open(e.AuditLog())
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []auditv1.Event
	sc := bufio.NewScanner(f)
	// A Metadata-level event is a few kB; the annotations of a denied
	// request make it longer, never this long.
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		var ev auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("testenv: %s line %d: %w", e.AuditLog(), line, err)
		}
		if keep(&ev) {
			out = append(out, ev)
		}
	}
	return out, sc.Err()
}

// IsWrite reports whether ev is a write that took effect on an object's main
// resource: answered 2xx, not a dry run, not a status (or other) subresource.
func IsWrite(ev *auditv1.Event) bool {
	return ev.ObjectRef != nil && ev.ObjectRef.Subresource == "" &&
		ev.ResponseStatus != nil && ev.ResponseStatus.Code/100 == 2 &&
		!strings.Contains(ev.RequestURI, "dryRun=")
}
