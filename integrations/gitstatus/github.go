package gitstatus

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/google/go-github/v93/github"
)

// githubProvider posts through go-github's Repositories.CreateStatus:
// POST /repos/{owner}/{repo}/statuses/{sha} with state, target_url,
// description and context, GitHub's own words (no mapping needed).
type githubProvider struct {
	client *github.Client
	token  string // scrubbed from errors
}

func newGitHubProvider(base *url.URL, h Host, hc *http.Client) (Provider, error) {
	client, err := newGitHubClient(base, h, hc)
	if err != nil {
		return nil, err
	}
	return &githubProvider{client: client, token: h.Token}, nil
}

// NewGitHubClient returns a go-github client for h (type github), with
// the API URL, token or GitHub App installation and HTTP client the status
// provider uses; other integrations (pull-request comments) call the host
// through it. hc nil means a client with DefaultHTTPTimeout. It makes no
// request. Pass its errors through GitHubError.
func NewGitHubClient(h Host, hc *http.Client) (*github.Client, error) {
	base, hc, err := CheckHost(h, hc)
	if err != nil {
		return nil, err
	}
	if h.Type != GitHub {
		return nil, fmt.Errorf("git host %s: type %q is not %q", base.Redacted(), h.Type, GitHub)
	}
	return newGitHubClient(base, h, hc)
}

func newGitHubClient(base *url.URL, h Host, hc *http.Client) (*github.Client, error) {
	opts, apiURL := githubOptions(base, hc)
	if app := h.GitHubApp; app != nil {
		tr, err := installationTransport(apiURL, app, hc.Transport)
		if err != nil {
			return nil, fmt.Errorf("git host %s: GitHub App %d: %w", base.Redacted(), app.AppID, err)
		}
		opts = append(opts, github.WithTransport(tr))
	} else {
		// Sent as "Authorization: Bearer <token>", which GitHub takes for
		// classic and fine-grained personal access tokens alike.
		opts = append(opts, github.WithAuthToken(h.Token))
	}
	client, err := github.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("git host %s: %w", base.Redacted(), err)
	}
	return client, nil
}

// githubOptions are the go-github options of the API at base, and the API's
// URL.
func githubOptions(base *url.URL, hc *http.Client) ([]github.ClientOptionsFunc, string) {
	// github.com's API is on api.github.com, which go-github defaults to.
	// Any other host is GitHub Enterprise: Server's API is under
	// <URL>/api/v3/; an API host of its own (GHE.com data residency:
	// https://api.<subdomain>.ghe.com) serves it at the root. go-github's
	// WithEnterpriseURLs applies the same rule; apiURL repeats it for the
	// installation token exchange.
	apiURL := "https://api.github.com"
	opts := []github.ClientOptionsFunc{github.WithHTTPClient(hc)}
	if host := strings.ToLower(base.Hostname()); host != "github.com" && host != "api.github.com" {
		opts = append(opts, github.WithEnterpriseURLs(base.String()+"/", base.String()+"/"))
		apiURL = strings.TrimSuffix(base.String(), "/api/v3") + "/api/v3"
		if strings.HasPrefix(host, "api.") || strings.Contains(host, ".api.") {
			apiURL = base.String()
		}
	}
	return opts, apiURL
}

// NewGitHubAppClient returns a go-github client of h (type github, with a
// GitHub App) that authenticates as the App itself (a JWT signed with its
// key), for what its installation may not read, such as GET /app. It makes
// no request.
func NewGitHubAppClient(h Host, hc *http.Client) (*github.Client, error) {
	base, hc, err := CheckHost(h, hc)
	if err != nil {
		return nil, err
	}
	if h.Type != GitHub || h.GitHubApp == nil {
		return nil, fmt.Errorf("git host %s: not a GitHub App", base.Redacted())
	}
	opts, _ := githubOptions(base, hc)
	tr := hc.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	atr, err := ghinstallation.NewAppsTransport(tr, h.GitHubApp.AppID, h.GitHubApp.PrivateKey)
	if err != nil {
		// The parse error names no key material.
		return nil, fmt.Errorf("git host %s: GitHub App %d: private key: %w", base.Redacted(), h.GitHubApp.AppID, err)
	}
	client, err := github.NewClient(append(opts, github.WithTransport(atr))...)
	if err != nil {
		return nil, fmt.Errorf("git host %s: %w", base.Redacted(), err)
	}
	return client, nil
}

// appTransports caches one installation transport per App installation and
// API, so that providers built per status share the installation token
// (valid an hour, refreshed by ghinstallation a minute before it expires)
// instead of minting one per status, which GitHub rate-limits. The key holds
// a hash of the private key, so that a rotated key gets a new transport.
var appTransports = struct {
	sync.Mutex
	m map[appTransportKey]*ghinstallation.Transport
}{m: map[appTransportKey]*ghinstallation.Transport{}}

type appTransportKey struct {
	apiURL                string
	appID, installationID int64
	privateKey            [sha256.Size]byte
}

// installationTransport returns the RoundTripper authenticating as app's
// installation: it exchanges a JWT signed with the App's key for an
// installation token (POST <api>/app/installations/<id>/access_tokens) and
// sends "Authorization: token <installation token>". tr carries the
// requests (nil: http.DefaultTransport); a cached transport keeps the tr it
// was built with.
func installationTransport(apiURL string, app *GitHubApp, tr http.RoundTripper) (http.RoundTripper, error) {
	if app.AppID <= 0 || app.InstallationID <= 0 {
		return nil, fmt.Errorf("app ID %d and installation ID %d must be positive", app.AppID, app.InstallationID)
	}
	key := appTransportKey{apiURL, app.AppID, app.InstallationID, sha256.Sum256(app.PrivateKey)}
	appTransports.Lock()
	defer appTransports.Unlock()
	if t, ok := appTransports.m[key]; ok {
		return t, nil
	}
	if tr == nil {
		tr = http.DefaultTransport
	}
	t, err := ghinstallation.New(tr, app.AppID, app.InstallationID, app.PrivateKey)
	if err != nil {
		// The parse error names no key material.
		return nil, fmt.Errorf("private key: %w", err)
	}
	t.BaseURL = apiURL
	appTransports.m[key] = t
	return t, nil
}

// checkGitHubRepository refuses a path GitHub cannot have (subgroups).
func checkGitHubRepository(repo Repository) error {
	if strings.Contains(repo.Owner, "/") || repo.Owner == "" {
		return &PermanentError{Err: fmt.Errorf("github: repository path %q is not owner/name", repo.Path)}
	}
	return nil
}

func (p *githubProvider) Post(ctx context.Context, repo Repository, sha string, s Status) error {
	if err := validateStatus(sha, s); err != nil {
		return err
	}
	if err := checkGitHubRepository(repo); err != nil {
		return err
	}
	status := github.RepoStatus{
		State:       new(string(s.State)),
		Context:     new(s.Context),
		Description: new(outcome.ShortDescription(s.Description)),
	}
	if s.TargetURL != "" {
		status.TargetURL = new(s.TargetURL)
	}
	_, resp, err := p.client.Repositories.CreateStatus(ctx, repo.Owner, repo.Name, sha, status)
	if err == nil || (resp != nil && resp.Response != nil && resp.StatusCode/100 == 2) {
		return nil // a 2xx with an error: created; only decoding the echoed status failed
	}
	op := fmt.Sprintf("github: POST repos/%s/%s/statuses/%s", repo.Owner, repo.Name, sha)
	return GitHubError(op, resp, err, p.token)
}

// githubStatusPages and githubStatusesPerPage bound what Shows reads. GitHub
// lists a commit's statuses of every context newest first and keeps up to
// 1000 per context, so reading until ours turns up could take many requests
// on a worker; a status older than the first 300 entries reads as not shown
// and is posted once more, as it was before Shows.
const (
	githubStatusPages     = 3
	githubStatusesPerPage = 100
)

// Shows implements StatusReader through Repositories.ListStatuses:
// GET /repos/{owner}/{repo}/commits/{sha}/statuses?per_page=100&page=N.
// The newest entry of s.Context (the highest ID on the first page that has
// one, not trusting the order within a page: statuses posted in the same
// second) is compared.
func (p *githubProvider) Shows(ctx context.Context, repo Repository, sha string, s Status) (bool, error) {
	if err := validateStatus(sha, s); err != nil {
		return false, err
	}
	if err := checkGitHubRepository(repo); err != nil {
		return false, err
	}
	opts := &github.ListOptions{PerPage: githubStatusesPerPage}
	for range githubStatusPages {
		statuses, resp, err := p.client.Repositories.ListStatuses(ctx, repo.Owner, repo.Name, sha, opts)
		if err != nil {
			op := fmt.Sprintf("github: GET repos/%s/%s/commits/%s/statuses", repo.Owner, repo.Name, sha)
			return false, GitHubError(op, resp, err, p.token)
		}
		var newest *github.RepoStatus
		for _, st := range statuses {
			if st.GetContext() == s.Context && (newest == nil || st.GetID() > newest.GetID()) {
				newest = st
			}
		}
		if newest != nil {
			return newest.GetState() == string(s.State) && newest.GetDescription() == outcome.ShortDescription(s.Description), nil
		}
		if resp.NextPage == 0 {
			return false, nil
		}
		opts.Page = resp.NextPage
	}
	return false, nil
}

// GitHubError maps an error of a go-github call onto the package's
// classification (see classify.go), naming op ("github: POST repos/o/r/...")
// and with token scrubbed. go-github recognises GitHub's rate limits itself,
// including before a request: after a 403 with X-RateLimit-Remaining: 0 it
// refuses further requests until the reset without sending them, with a
// synthetic 403 that carries no headers, so its error types are read before
// the response. A 2xx whose body could not be decoded is a plain error.
func GitHubError(op string, resp *github.Response, err error, token string) error {
	var primary *github.RateLimitError
	if errors.As(err, &primary) {
		var d time.Duration
		if primary.Response != nil {
			d = retryAfter(primary.Response.Header, time.Now())
		}
		if d == 0 {
			d = max(time.Until(primary.Rate.Reset.Time), 0)
		}
		return &RateLimitError{RetryAfter: d, Err: errors.New(scrubSecrets(op+": "+primary.Message, []string{token}))}
	}
	var secondary *github.AbuseRateLimitError
	if errors.As(err, &secondary) {
		return &RateLimitError{RetryAfter: max(secondary.GetRetryAfter(), 0), Err: errors.New(scrubSecrets(op+": "+secondary.Message, []string{token}))}
	}
	var tokenErr *ghinstallation.HTTPError
	if errors.As(err, &tokenErr) && tokenErr.Response != nil {
		// The installation token exchange was refused (wrong App ID or key:
		// 401; App not installed: 404; GitHub down: 5xx).
		r := tokenErr.Response
		defer r.Body.Close()
		return httpStatusError(op+": installation token", r.StatusCode, r.Header, githubMessage(r.Body), token)
	}
	if resp != nil && resp.Response != nil && resp.StatusCode/100 == 2 {
		return undecodedError(op, resp.StatusCode, err, token)
	}
	if resp != nil && resp.Response != nil {
		var detail string
		var er *github.ErrorResponse
		if errors.As(err, &er) {
			detail = er.Message
			for _, e := range er.Errors {
				if e.Message != "" {
					detail += "; " + e.Message
				} else {
					detail += fmt.Sprintf("; %s %s %s", e.Resource, e.Field, e.Code)
				}
			}
		}
		return httpStatusError(op, resp.StatusCode, resp.Header, detail, token)
	}
	return transportError(op, err, token)
}

// githubMessage is the "message" of a GitHub error body, if any.
func githubMessage(body io.Reader) string {
	var e struct {
		Message string `json:"message"`
	}
	_ = json.NewDecoder(io.LimitReader(body, 64<<10)).Decode(&e)
	return e.Message
}
