package commitstatus

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// bitbucketCloudKeyLimit is the longest build key Bitbucket Cloud takes.
const bitbucketCloudKeyLimit = 40

// bitbucketCloudProvider posts to Bitbucket Cloud's commit build status API:
// POST /2.0/repositories/{workspace}/{repo_slug}/commit/{commit}/statuses/build
// with key, state, name, url and description. A status with the same key
// on a commit is updated in place.
type bitbucketCloudProvider struct {
	api githost.Bitbucket
	web string // https://bitbucket.org
}

func newBitbucketCloudProvider(h githost.Host, clients githost.Clients) (Provider, error) {
	api, err := clients.Bitbucket(h)
	if err != nil {
		return nil, err
	}
	// bitbucket.org's API is on api.bitbucket.org. Any other URL (a proxy,
	// a test server) serves both the API and the web pages.
	web := api.API
	if web == "https://api.bitbucket.org" {
		web = "https://bitbucket.org"
	}
	return &bitbucketCloudProvider{api: api, web: web}, nil
}

// commitPath is the commit's statuses/build path, each element escaped,
// and the escaped workspace and slug (for the commit page).
func (p *bitbucketCloudProvider) commitPath(repo githost.Repository, sha string) (path, ws, slug string, err error) {
	if strings.Contains(repo.Owner, "/") || repo.Owner == "" {
		return "", "", "", &githost.PermanentError{Err: fmt.Errorf("bitbucket-cloud: repository path %q is not workspace/repo_slug", repo.Path)}
	}
	ws, slug = url.PathEscape(repo.Owner), url.PathEscape(repo.Name)
	return fmt.Sprintf("/2.0/repositories/%s/%s/commit/%s/statuses/build", ws, slug, url.PathEscape(sha)), ws, slug, nil
}

func (p *bitbucketCloudProvider) Post(ctx context.Context, repo githost.Repository, sha string, s Status) error {
	if err := validateStatus(sha, s); err != nil {
		return err
	}
	path, ws, slug, err := p.commitPath(repo, sha)
	if err != nil {
		return err
	}
	body := newBitbucketBuildStatus(s, bitbucketCloudKeyLimit, fmt.Sprintf("%s/%s/%s/commits/%s", p.web, ws, slug, sha))
	_, err = p.api.CallJSON(ctx, http.MethodPost, path, body, nil)
	return err
}

// Shows implements StatusReader:
// GET /2.0/repositories/{workspace}/{repo_slug}/commit/{commit}/statuses/build/{key},
// the key path-escaped. A key holds one status per commit, updated in place
// by Post, so it is the newest; 404 means none.
func (p *bitbucketCloudProvider) Shows(ctx context.Context, repo githost.Repository, sha string, s Status) (bool, error) {
	if err := validateStatus(sha, s); err != nil {
		return false, err
	}
	path, _, _, err := p.commitPath(repo, sha)
	if err != nil {
		return false, err
	}
	path += "/" + url.PathEscape(statusKey(s.Context, bitbucketCloudKeyLimit))
	var shown bitbucketShown
	code, err := p.api.CallJSON(ctx, http.MethodGet, path, nil, &shown, http.StatusNotFound)
	return err == nil && code != http.StatusNotFound && shown.shows(s, bitbucketCloudKeyLimit), err
}
