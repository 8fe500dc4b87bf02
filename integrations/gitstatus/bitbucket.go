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

// postBitbucketJSON POSTs body as JSON to endpoint with
// "Authorization: Bearer <token>" (Bitbucket Cloud repository, project and
// workspace access tokens; Bitbucket Server HTTP access tokens) and
// classifies the answer. message extracts the host's error text from a
// refusal's body.
func postBitbucketJSON(ctx context.Context, hc *http.Client, op, endpoint, token string, body any, message func([]byte) string) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return &PermanentError{Err: fmt.Errorf("%s: %w", op, err)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return &PermanentError{Err: fmt.Errorf("%s: %w", op, err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return transportError(op, err, token)
	}
	defer resp.Body.Close()
	// Read (a bounded part of) the body even on success, so that the
	// connection can be reused.
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	return httpStatusError(op, resp.StatusCode, resp.Header, message(data), token)
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
