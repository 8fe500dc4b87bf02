package gitstatus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// The Bitbucket providers speak plain net/http to the documented REST APIs.
// github.com/ktrysmt/go-bitbucket (v0.10.0) was considered for Bitbucket
// Cloud and does not fit: its CreateCommitStatus drops the request context
// (it calls req.WithContext and discards the result), so a post could not
// be cancelled or bounded; its UnexpectedResponseStatusError keeps the
// status code but not the headers, losing Retry-After; and it formats
// workspace and slug into the path unescaped. Bitbucket Server / Data
// Center has no Go client library among those allowed.

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

// postBitbucketJSON POSTs body as JSON to endpoint and classifies the
// answer. message extracts the host's error text from a refusal's body.
func postBitbucketJSON(ctx context.Context, hc *http.Client, op, endpoint, token string, body any, message func([]byte) string) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return &PermanentError{Err: fmt.Errorf("%s: %w", op, err)}
	}
	resp, data, err := bitbucketCall(ctx, hc, http.MethodPost, op, endpoint, token, payload)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 == 2 {
		return nil
	}
	return httpStatusError(op, resp.StatusCode, resp.Header, message(data), token)
}

// getBitbucketJSON GETs endpoint and decodes a 2xx answer into v. A 404
// answers found false: both APIs say so for a key the commit has no build
// of (and for a repository or commit they do not know, which the post that
// follows is refused for). Other refusals are classified as a post's.
func getBitbucketJSON(ctx context.Context, hc *http.Client, op, endpoint, token string, v any, message func([]byte) string) (found bool, err error) {
	resp, data, err := bitbucketCall(ctx, hc, http.MethodGet, op, endpoint, token, nil)
	switch {
	case err != nil:
		return false, err
	case resp.StatusCode == http.StatusNotFound:
		return false, nil
	case resp.StatusCode/100 != 2:
		return false, httpStatusError(op, resp.StatusCode, resp.Header, message(data), token)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, undecodedError(op, resp.StatusCode, err, token)
	}
	return true, nil
}

// bitbucketCall sends a request (with payload as its JSON body, if any) with
// "Authorization: Bearer <token>" (Bitbucket Cloud repository, project and
// workspace access tokens; Bitbucket Server HTTP access tokens) and returns
// the answer with (a bounded part of) its body, read even on success so
// that the connection can be reused. err is a request that got no answer.
func bitbucketCall(ctx context.Context, hc *http.Client, method, op, endpoint, token string, payload []byte) (*http.Response, []byte, error) {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, endpoint, body)
	if err != nil {
		return nil, nil, &PermanentError{Err: fmt.Errorf("%s: %w", op, err)}
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, transportError(op, err, token)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp, data, nil
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

// bitbucketCloudMessage reads {"type":"error","error":{"message":…,"detail":…}}.
func bitbucketCloudMessage(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Detail  any    `json:"detail"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
		return string(body)
	}
	if d, ok := e.Error.Detail.(string); ok && d != "" {
		return e.Error.Message + ": " + d
	}
	return e.Error.Message
}

// bitbucketServerMessage reads {"errors":[{"message":…},…]}.
func bitbucketServerMessage(body []byte) string {
	var e struct {
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Errors) == 0 {
		return string(body)
	}
	var msgs []string
	for _, m := range e.Errors {
		msgs = append(msgs, m.Message)
	}
	return strings.Join(msgs, "; ")
}

// BitbucketCloudError classifies an answer of Bitbucket Cloud for other
// integrations that call it over net/http (pull requests), as the
// provider's are: resp nil is a request that got no answer (err); a 2xx is
// one whose body could not be decoded (err); otherwise resp's code with
// what body says. op names the request; token is scrubbed.
func BitbucketCloudError(op string, resp *http.Response, body []byte, err error, token string) error {
	return bitbucketError(op, resp, body, err, token, bitbucketCloudMessage)
}

// BitbucketServerError is BitbucketCloudError for Bitbucket Server / Data
// Center.
func BitbucketServerError(op string, resp *http.Response, body []byte, err error, token string) error {
	return bitbucketError(op, resp, body, err, token, bitbucketServerMessage)
}

func bitbucketError(op string, resp *http.Response, body []byte, err error, token string, message func([]byte) string) error {
	switch {
	case resp == nil:
		return transportError(op, err, token)
	case resp.StatusCode/100 == 2:
		return undecodedError(op, resp.StatusCode, err, token)
	}
	return httpStatusError(op, resp.StatusCode, resp.Header, message(body), token)
}
