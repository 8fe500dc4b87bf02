package commitstatus

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/claimwarden/claimwarden/integrations/githost"
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
	host githost.Host
	api  githost.Bitbucket
}

func newBitbucketServerProvider(h githost.Host, clients githost.Clients) (Provider, error) {
	api, err := clients.Bitbucket(h)
	if err != nil {
		return nil, err
	}
	return &bitbucketServerProvider{host: h, api: api}, nil
}

// builds is the commit's repository-scoped builds path, escaped, and its
// repository's commit page.
func (p *bitbucketServerProvider) builds(repo githost.Repository, sha string) (path, commitPage string, err error) {
	// HTTPS clone URLs read https://host[/context]/scm/PROJ/repo.git (the
	// context path is stripped here), SSH ones
	// ssh://git@host:7999/PROJ/repo.git: the path is [scm/]PROJ/repo either
	// way (a personal project's key is "~user"). Anything else is not a
	// Bitbucket Server repository.
	segments := strings.Split(p.host.RepositoryPath(repo), "/")
	if len(segments) < 2 || (len(segments) > 2 && !(len(segments) == 3 && segments[0] == "scm")) {
		return "", "", &githost.PermanentError{Err: fmt.Errorf("bitbucket-server: repository path %q is not [scm/]PROJECT/repo", repo.Path)}
	}
	project := url.PathEscape(segments[len(segments)-2])
	slug := url.PathEscape(segments[len(segments)-1])
	path = fmt.Sprintf("/rest/api/latest/projects/%s/repos/%s/commits/%s/builds", project, slug, url.PathEscape(sha))
	return path, fmt.Sprintf("%s/projects/%s/repos/%s/commits/%s", p.api.API, project, slug, sha), nil
}

func (p *bitbucketServerProvider) Post(ctx context.Context, repo githost.Repository, sha string, s Status) error {
	if err := validateStatus(sha, s); err != nil {
		return err
	}
	path, commitPage, err := p.builds(repo, sha)
	if err != nil {
		return err
	}
	body := newBitbucketBuildStatus(s, bitbucketServerKeyLimit, commitPage)
	_, err = p.api.CallJSON(ctx, http.MethodPost, path, body, nil)
	return err
}

// Shows implements StatusReader through the same resource's read (7.14 and
// later): GET .../commits/{commitId}/builds?key={key} answers the one build
// status of that key in the repository, which Post updates in place, so it
// is the newest; 404 means none. (The deprecated
// /rest/build-status/1.0/commits/{commitId} lists builds of every
// repository, not the one Post writes to.) A release before 7.14 does not
// serve the read; whatever it answers, the status is posted as before Shows.
func (p *bitbucketServerProvider) Shows(ctx context.Context, repo githost.Repository, sha string, s Status) (bool, error) {
	if err := validateStatus(sha, s); err != nil {
		return false, err
	}
	path, _, err := p.builds(repo, sha)
	if err != nil {
		return false, err
	}
	query := "?" + url.Values{"key": {statusKey(s.Context, bitbucketServerKeyLimit)}}.Encode()
	var shown bitbucketShown
	code, err := p.api.CallJSON(ctx, http.MethodGet, path+query, nil, &shown, http.StatusNotFound)
	return err == nil && code != http.StatusNotFound && shown.shows(s, bitbucketServerKeyLimit), err
}
