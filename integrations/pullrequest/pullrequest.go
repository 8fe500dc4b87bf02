// Package pullrequest proposes a change of files as a pull request on a Git
// host, through its API (no git binary, no clone): one pull request per
// key, updated in place and never duplicated, found again after a restart
// by its branch, which belongs to claimwarden and is rebuilt from the base
// branch at every update. Autoresize (issue 30) proposes resizes with it.
package pullrequest

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// BranchPrefix starts every branch a proposal is made on.
const BranchPrefix = "claimwarden/"

// Change is a proposed change of files in one repository.
type Change struct {
	// Owner and Repo name the repository; Base is the branch the change is
	// proposed to (the one the GitOps tool applies).
	Owner, Repo, Base string
	// Key names the proposal: one pull request per key, on branch
	// BranchPrefix + Key (e.g. autoresize/shop/web).
	Key   string
	Files []File
	// Title and Body are the pull request's; Message the commit's.
	Title, Body, Message string
}

// File is a file's new content, by its path in the repository.
type File struct {
	Path    string
	Content []byte
}

// State is where a pull request stands.
type State string

const (
	Open   State = "open"
	Merged State = "merged"
	// Closed is closed without being merged.
	Closed State = "closed"
)

// PullRequest is one pull request of a key.
type PullRequest struct {
	Number int64
	URL    string
	State  State
	// ClosedAt is when it was merged or closed; zero while it is open.
	ClosedAt time.Time
	// Head is the commit its branch ends at: from Propose, the commit
	// claimwarden made; from Last, what the host says the head is
	// (abbreviated by Bitbucket Cloud: compare with SameCommit).
	Head string
}

// SameCommit reports whether commit IDs a and b name the same commit: equal,
// or one abbreviating the other to 12 hex digits or more.
func SameCommit(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= 12 && strings.HasPrefix(b, a) || a != "" && a == b
}

// Proposer opens and finds the pull requests of keys on one Git host, and
// reads the files an edit starts from. A key's pull requests are only those
// the token's own identity opened from the base repository's branch (see
// own.go): another's, or a fork's, is never counted or edited.
type Proposer interface {
	// Propose opens the pull request of c.Key, or updates the open one:
	// its branch rebuilt from c.Base with c.Files, its title and body. An
	// open pull request of another author from the repository's own branch
	// to c.Base is an error naming it (the hosts take one per branch).
	Propose(ctx context.Context, c Change) (PullRequest, error)
	// Last is the newest pull request of key in any state, nil when there
	// is none (a closed one starts autoresize's cooldown).
	Last(ctx context.Context, owner, repo, key string) (*PullRequest, error)
	// File is the content of the file at path on branch ref; an error
	// wrapping ErrNotFound when there is none, ErrTooLarge when it has more
	// than MaxFileBytes.
	File(ctx context.Context, owner, repo, ref, path string) ([]byte, error)
	// Files are the paths of the files (not directories) under dir on
	// branch ref, at any depth, relative to the repository's root and
	// sorted; dir "" is the whole repository. ErrTooLarge when there are
	// more than MaxFiles. A dir the branch does not have lists nothing on
	// Gitea and GitHub (the whole tree is filtered) and wraps ErrNotFound
	// on GitLab and Bitbucket (the host lists dir itself).
	Files(ctx context.Context, owner, repo, ref, dir string) ([]string, error)
	// DefaultBranch is the repository's default branch (what a clone
	// checks out, what Argo CD's targetRevision HEAD follows); an error
	// when the host answers none.
	DefaultBranch(ctx context.Context, owner, repo string) (string, error)
}

const (
	// MaxFileBytes bounds a file read: whoever may push writes it, and it
	// is parsed whole.
	MaxFileBytes = 1 << 20
	// MaxFiles bounds a directory listed.
	MaxFiles = 2000
)

var (
	// ErrNotFound says a file does not exist on the branch.
	ErrNotFound = errors.New("not found")
	// ErrTooLarge says a file or a directory is larger than is read.
	ErrTooLarge = githost.ErrTooLarge
)

// keyPattern is what a key may be: path segments of letters, digits, dot,
// dash and underscore (namespace/name are), none starting with a dot or
// ending in .lock, so that the branch is a valid ref (git check-ref-format).
var keyPattern = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$`)

// defaultBranch is branch, or an error naming op when the host answered
// none (an empty repository has no default branch).
func defaultBranch(op, branch string) (string, error) {
	if branch == "" {
		return "", fmt.Errorf("%s: the repository has no default branch", op)
	}
	return branch, nil
}

func branchOf(key string) (string, error) {
	if !keyPattern.MatchString(key) || len(key) > 200 || strings.Contains(key, "..") || strings.Contains(key+"/", ".lock/") {
		return "", fmt.Errorf("pullrequest: %q is not a key (path segments of letters, digits, . _ -)", key)
	}
	return BranchPrefix + key, nil
}
