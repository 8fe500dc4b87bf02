package githost

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v93/github"
)

// GitHub returns a go-github client for h (type github), with its API URL
// and token or GitHub App installation (shared through c.Apps). It makes no
// request. Pass its errors through GitHubError.
func (c Clients) GitHub(h Host) (*github.Client, error) {
	base, hc, err := c.check(h, GitHub)
	if err != nil {
		return nil, err
	}
	opts, apiURL := githubOptions(base, hc)
	if app := h.GitHubApp; app != nil {
		tr, err := c.Apps.installation(apiURL, app, hc.Transport)
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

// GitHubApp returns a go-github client of h (type github, with a GitHub
// App) that authenticates as the App itself (a JWT signed with its key), for
// what its installation may not read, such as GET /app. It makes no
// request.
func (c Clients) GitHubApp(h Host) (*github.Client, error) {
	base, hc, err := c.Client(h)
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
