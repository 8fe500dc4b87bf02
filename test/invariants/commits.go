package invariants

import "fmt"

// commitKey is one commit status context on one commit.
type commitKey struct{ sha, context string }

// final are the commit-status states that end a commit's story.
var final = map[string]bool{"success": true, "failure": true, "error": true}

// CommitStatus records one status the test read back from the Git host (or
// its sink), in the order posted: every commit must end with exactly one
// final status (success, failure or error) per context.
func (r *Recorder) CommitStatus(sha, context, state string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := commitKey{sha, context}
	r.commits[k] = append(r.commits[k], state)
}

func (r *Recorder) checkCommits() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, states := range r.commits {
		n := 0
		for _, s := range states {
			if final[s] {
				n++
			}
		}
		if n != 1 {
			r.violateLocked(CommitStatuses, fmt.Sprintf("commit %.12s", k.sha), k.sha+"/"+k.context,
				"context %s has %d final statuses, want exactly 1 (all: %v)", k.context, n, states)
		}
	}
}
