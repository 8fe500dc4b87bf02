package gitstatus

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// bitbucketServerKeyLimit is the longest build key Bitbucket Server / Data
// Center stores.
const bitbucketServerKeyLimit = 255

// bitbucketServerProvider posts to Bitbucket Server / Data Center's
// repository-scoped build status API (7.4 and later):
//
//	POST /rest/api/latest/projects/{projectKey}/repos/{repositorySlug}/commits/{commitId}/builds
//
// with key, state, url, name and description; the answer is 204. It is
// chosen over the older POST /rest/build-status/1.0/commits/{commitId},
// which Atlassian deprecated: that one records a build against a commit ID
// in every repository (forks included), while the new one records it in
// the repository it belongs to, which is what required-builds merge checks
// read. Bitbucket Server releases older than 7.4 are out of support.
type bitbucketServerProvider struct {
	base  *url.URL
	token string
	hc    *http.Client
}

func newBitbucketServerProvider(base *url.URL, h Host, hc *http.Client) Provider {
	return &bitbucketServerProvider{base: base, token: h.Token, hc: hc}
}

func (p *bitbucketServerProvider) Post(ctx context.Context, repo Repository, sha string, s Status) error {
	if err := validateStatus(sha, s); err != nil {
		return err
	}
	// HTTPS clone URLs read https://host[/context]/scm/PROJ/repo.git (the
	// context path is stripped above), SSH ones
	// ssh://git@host:7999/PROJ/repo.git: the path is [scm/]PROJ/repo either
	// way (a personal project's key is "~user"). Anything else is not a
	// Bitbucket Server repository.
	segments := strings.Split(stripBasePath(p.base, repo.Path), "/")
	if len(segments) < 2 || (len(segments) > 2 && !(len(segments) == 3 && segments[0] == "scm")) {
		return &PermanentError{Err: fmt.Errorf("bitbucket-server: repository path %q is not [scm/]PROJECT/repo", repo.Path)}
	}
	project := url.PathEscape(segments[len(segments)-2])
	slug := url.PathEscape(segments[len(segments)-1])
	path := fmt.Sprintf("/rest/api/latest/projects/%s/repos/%s/commits/%s/builds", project, slug, url.PathEscape(sha))
	body := newBitbucketBuildStatus(s, bitbucketServerKeyLimit, fmt.Sprintf("%s/projects/%s/repos/%s/commits/%s", p.base, project, slug, sha))
	return postBitbucketJSON(ctx, p.hc, "bitbucket-server: POST "+path, p.base.String()+path, p.token, body, bitbucketServerMessage)
}
