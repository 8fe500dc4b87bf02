package main

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// application is an Application with status as Argo CD v3.6 writes it.
func application(status map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"status": status}}
}

// appStateOf reads who started the last operation, for which commit, and
// the commit last synced: what the story's milestones and summary say.
func TestAppStateOf(t *testing.T) {
	const old, sha = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	history := []any{map[string]any{"revision": old}}
	for _, tc := range []struct {
		name                string
		op                  map[string]any
		initiator, revision string
		failed              bool
	}{
		{
			name: "automated sync refused, retried",
			op: map[string]any{
				"phase": "Running", "retryCount": int64(1),
				"message":   "one or more objects failed to apply, reason: ... field is immutable. Retrying attempt #1 at 2026-11-30T09:07:20Z.",
				"operation": map[string]any{"sync": map[string]any{"revision": sha}, "initiatedBy": map[string]any{"automated": true}},
			},
			initiator: "Argo CD's automated sync (retry #1)", revision: sha, failed: true,
		},
		{
			name: "automated sync failed for good",
			op: map[string]any{
				"phase": "Failed", "message": "one or more objects failed to apply",
				"operation":  map[string]any{"sync": map[string]any{"revision": sha}, "initiatedBy": map[string]any{"automated": true}},
				"syncResult": map[string]any{"revision": sha},
			},
			initiator: "Argo CD's automated sync", revision: sha, failed: true,
		},
		{
			name: "claimwarden's sync, no revision asked, the result names it",
			op: map[string]any{
				"phase": "Succeeded", "message": "successfully synced (all tasks run)",
				"operation":  map[string]any{"sync": map[string]any{}, "initiatedBy": map[string]any{"username": argoAccount}},
				"syncResult": map[string]any{"revision": sha},
			},
			initiator: "claimwarden's sync", revision: sha,
		},
		{
			name: "a person's sync running",
			op: map[string]any{
				"phase":     "Running",
				"operation": map[string]any{"sync": map[string]any{"revision": sha}, "initiatedBy": map[string]any{"username": "alice"}},
			},
			initiator: "a sync by alice", revision: sha,
		},
	} {
		st := appStateOf(application(map[string]any{
			"sync":           map[string]any{"status": "OutOfSync", "revision": sha},
			"operationState": tc.op,
			"history":        history,
		}))
		if st.initiator != tc.initiator || st.opRevision != tc.revision || st.failedAttempt() != tc.failed || st.deployed != old {
			t.Errorf("%s: initiator %q, opRevision %q, failedAttempt %v, deployed %q; want %q, %q, %v, %q",
				tc.name, st.initiator, st.opRevision, st.failedAttempt(), st.deployed, tc.initiator, tc.revision, tc.failed, old)
		}
	}

	synced := appStateOf(application(map[string]any{
		"sync": map[string]any{"status": "Synced", "revision": sha},
		"operationState": map[string]any{"phase": "Succeeded",
			"operation": map[string]any{"sync": map[string]any{"revision": sha}, "initiatedBy": map[string]any{"automated": true}}},
	}))
	if !synced.syncedAt(sha) || synced.syncedAt(old) {
		t.Errorf("Synced and Succeeded at %s: syncedAt(sha) %v, syncedAt(old) %v; want true, false", sha[:8], synced.syncedAt(sha), synced.syncedAt(old))
	}
	if st := appStateOf(application(map[string]any{})); st.initiator != "a sync" || st.opRevision != "" || st.deployed != "" || st.failedAttempt() {
		t.Errorf("Application without status: %+v, want nothing read", st)
	}
}
