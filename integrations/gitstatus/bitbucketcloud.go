package gitstatus

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// bitbucketCloudKeyLimit is the longest build key Bitbucket Cloud takes.
const bitbucketCloudKeyLimit = 40

// bitbucketCloudProvider posts to Bitbucket Cloud's commit build status API:
// POST /2.0/repositories/{workspace}/{repo_slug}/commit/{commit}/statuses/build
// with key, state, name, url and description. A status with the same key
// on a commit is updated in place.
type bitbucketCloudProvider struct {
	api, web string // https://api.bitbucket.org, https://bitbucket.org
	token    string
	hc       *http.Client
}

func newBitbucketCloudProvider(base *url.URL, h Host, hc *http.Client) Provider {
	// bitbucket.org's API is on api.bitbucket.org. Any other URL (a proxy,
	// a test server) serves both the API and the web pages.
	api, web := base.String(), base.String()
	if host := strings.ToLower(base.Hostname()); host == "bitbucket.org" || host == "api.bitbucket.org" {
		api, web = "https://api.bitbucket.org", "https://bitbucket.org"
	}
	return &bitbucketCloudProvider{api: api, web: web, token: h.Token, hc: hc}
}

// commitPath is the commit's statuses/build path, each element escaped,
// and the escaped workspace and slug (for the commit page).
func (p *bitbucketCloudProvider) commitPath(repo Repository, sha string) (path, ws, slug string, err error) {
	if strings.Contains(repo.Owner, "/") || repo.Owner == "" {
		return "", "", "", &PermanentError{Err: fmt.Errorf("bitbucket-cloud: repository path %q is not workspace/repo_slug", repo.Path)}
	}
	ws, slug = url.PathEscape(repo.Owner), url.PathEscape(repo.Name)
	return fmt.Sprintf("/2.0/repositories/%s/%s/commit/%s/statuses/build", ws, slug, url.PathEscape(sha)), ws, slug, nil
}

func (p *bitbucketCloudProvider) Post(ctx context.Context, repo Repository, sha string, s Status) error {
	if err := validateStatus(sha, s); err != nil {
		return err
	}
	path, ws, slug, err := p.commitPath(repo, sha)
	if err != nil {
		return err
	}
	body := newBitbucketBuildStatus(s, bitbucketCloudKeyLimit, fmt.Sprintf("%s/%s/%s/commits/%s", p.web, ws, slug, sha))
	return postBitbucketJSON(ctx, p.hc, "bitbucket-cloud: POST "+path, p.api+path, p.token, body, bitbucketCloudMessage)
}

// Shows implements StatusReader:
// GET /2.0/repositories/{workspace}/{repo_slug}/commit/{commit}/statuses/build/{key},
// the key path-escaped. A key holds one status per commit, updated in place
// by Post, so it is the newest; 404 means none.
func (p *bitbucketCloudProvider) Shows(ctx context.Context, repo Repository, sha string, s Status) (bool, error) {
	if err := validateStatus(sha, s); err != nil {
		return false, err
	}
	path, _, _, err := p.commitPath(repo, sha)
	if err != nil {
		return false, err
	}
	path += "/" + url.PathEscape(statusKey(s.Context, bitbucketCloudKeyLimit))
	var shown bitbucketShown
	found, err := getBitbucketJSON(ctx, p.hc, "bitbucket-cloud: GET "+path, p.api+path, p.token, &shown, bitbucketCloudMessage)
	return found && shown.shows(s, bitbucketCloudKeyLimit), err
}
