package commitstatus

import (
	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// bitbucketStates maps the package's states onto Bitbucket's build states
// (the same words in Cloud and Server). Bitbucket has no "error": FAILED is
// what a failed or errored build shows, and what blocks merges that require
// passing builds. (Cloud's STOPPED means a build stopped by a user.)
var bitbucketStates = map[State]string{
	Pending: "INPROGRESS",
	Success: "SUCCESSFUL",
	Failure: "FAILED",
	Error:   "FAILED",
}

// bitbucketBuildStatus is the request body both Bitbucket APIs take.
type bitbucketBuildStatus struct {
	Key         string `json:"key"`
	State       string `json:"state"`
	Name        string `json:"name"`
	URL         string `json:"url"`
	Description string `json:"description"`
}

// newBitbucketBuildStatus is the body both Bitbucket APIs take. Both require a
// url: without a target URL the status links to the commit page, where users
// see it anyway.
func newBitbucketBuildStatus(s Status, keyLimit int, commitPage string) bitbucketBuildStatus {
	link := s.TargetURL
	if link == "" {
		link = commitPage
	}
	return bitbucketBuildStatus{
		Key:         statusKey(s.Context, keyLimit),
		State:       bitbucketStates[s.State],
		Name:        s.Context,
		URL:         link,
		Description: outcome.ShortDescription(s.Description),
	}
}

// bitbucketShown is what both APIs answer for one build status; Shows
// compares it with the body Post would send.
type bitbucketShown struct {
	Key         string `json:"key"`
	State       string `json:"state"`
	Description string `json:"description"`
}

// shows reports whether b is s as newBitbucketBuildStatus would post it:
// FAILED matches failure and error alike, since both are posted as FAILED.
func (b bitbucketShown) shows(s Status, keyLimit int) bool {
	return b.Key == statusKey(s.Context, keyLimit) && b.State == bitbucketStates[s.State] &&
		b.Description == outcome.ShortDescription(s.Description)
}
