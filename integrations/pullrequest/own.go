package pullrequest

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
)

// A key's branch name is no proof: anyone who can read a repository may
// open a pull request from a fork's branch of that name, and any writer
// from the repository's own. Only a pull request whose head is the base
// repository's branch and whose author is the token's identity is
// claimwarden's: the one Last reports and Propose edits.

// candidate is one pull request from a key's branch, as a search lists it.
type candidate struct {
	pr PullRequest
	// author is the author's identity as the host's identity lookup
	// answers it (an ID, a UUID, a login); authorName names them in errors.
	author, authorName string
	// sameRepo says the head branch is the base repository's (not a fork's).
	sameRepo bool
	// base is the branch it is proposed to; head the branch it is from
	// (set where a listing holds several branches').
	base, head string
	// version is Bitbucket Server's, which an edit must send.
	version int64
}

// own is the first of cands (newest first) that claimwarden opened, as
// identity me; nil when none is.
func own(me string, cands []candidate) *candidate {
	for _, c := range cands {
		if c.sameRepo && c.author != "" && strings.EqualFold(c.author, me) {
			return &c
		}
	}
	return nil
}

// last is the pull request of own(me, cands), nil when none.
func last(me string, cands []candidate) *PullRequest {
	if c := own(me, cands); c != nil {
		return &c.pr
	}
	return nil
}

// occupied is an error naming the open pull request of another author
// from the repository's own branch to base, when there is one among cands:
// the hosts take one open pull request per head and base, so claimwarden
// cannot open its own, and it never edits another's.
func occupied(me, branch, base string, cands []candidate) error {
	for _, c := range cands {
		if c.sameRepo && c.pr.State == Open && c.base == base && !strings.EqualFold(c.author, me) {
			return fmt.Errorf("pull request %s from branch %s to %s was opened by %q, not by claimwarden's identity: it is left as it is, and claimwarden opens its own once it is closed",
				c.pr.URL, branch, base, c.authorName)
		}
	}
	return nil
}

// mine is own(me, cands), or, when claimwarden has no open pull request
// from branch, the occupied error: Propose asks it before it writes
// anything, since a branch another user's pull request is from is that
// pull request's, and pushing to it would change their proposal.
func mine(me, branch, base string, cands []candidate) (*candidate, error) {
	if c := own(me, cands); c != nil {
		return c, nil
	}
	return nil, occupied(me, branch, base, cands)
}

// Identities caches who each credential is, by host and a hash of the
// credential (never the credential itself): it never changes, and a lookup
// per check would double the requests of a StatefulSet at rest. The
// controller shares one between the proposers it builds per check; the
// zero value is ready, and a nil *Identities caches nothing.
type Identities struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]string
}

// of is the identity of credential on host, from fetch the first time; an
// error when the host names none.
func (ids *Identities) of(host, credential string, fetch func() (string, error)) (string, error) {
	key := sha256.Sum256([]byte(host + "\x00" + credential))
	if me, ok := ids.get(key); ok {
		return me, nil
	}
	me, err := fetch()
	if err != nil {
		return "", err
	}
	if me == "" {
		return "", fmt.Errorf("%s: the host did not say who the token is: no pull request can be told to be claimwarden's", host)
	}
	ids.put(key, me)
	return me, nil
}

func (ids *Identities) get(key [sha256.Size]byte) (string, bool) {
	if ids == nil {
		return "", false
	}
	ids.mu.Lock()
	defer ids.mu.Unlock()
	me, ok := ids.m[key]
	return me, ok
}

func (ids *Identities) put(key [sha256.Size]byte, me string) {
	if ids == nil {
		return
	}
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if ids.m == nil {
		ids.m = map[[sha256.Size]byte]string{}
	}
	ids.m[key] = me
}
