package githost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// Both Bitbucket APIs are called over plain net/http with their documented
// paths. github.com/ktrysmt/go-bitbucket (v0.10.0) was considered for
// Bitbucket Cloud and does not fit: its CreateCommitStatus drops the
// request context (it calls req.WithContext and discards the result), so a
// post could not be cancelled or bounded; its UnexpectedResponseStatusError
// keeps the status code but not the headers, losing Retry-After; and it
// formats workspace and slug into the path unescaped. Bitbucket Server /
// Data Center has no Go client library among those allowed.

// MaxAnswerBytes bounds the JSON answer Bitbucket.Call reads (a page of
// pull requests or files).
const MaxAnswerBytes = 4 << 20

// ErrTooLarge says an answer is larger than is read.
var ErrTooLarge = errors.New("too large")

// Bitbucket calls one Bitbucket API, Cloud's or Server's, with the token as
// a bearer token (Bitbucket Cloud repository, project and workspace access
// tokens; Bitbucket Server HTTP access tokens), and classifies its
// refusals as every host's are (see classify.go).
type Bitbucket struct {
	// Type is BitbucketCloud or BitbucketServer: it names errors and says
	// how a refusal's body is read.
	Type HostType
	// API is the API's root URL, without a trailing slash.
	API   string
	Token string
	// HTTP carries the requests; nil means a client with DefaultHTTPTimeout.
	HTTP *http.Client
}

// Bitbucket returns the client of h (type bitbucket-cloud or
// bitbucket-server). Bitbucket Cloud's API for https://bitbucket.org is on
// api.bitbucket.org; any other URL (a proxy, a test server) serves the API
// itself. It makes no request.
func (c Clients) Bitbucket(h Host) (Bitbucket, error) {
	base, hc, err := c.Client(h)
	if err != nil {
		return Bitbucket{}, err
	}
	if h.Type != BitbucketCloud && h.Type != BitbucketServer {
		return Bitbucket{}, fmt.Errorf("git host %s: type %q is not %q or %q", base.Redacted(), h.Type, BitbucketCloud, BitbucketServer)
	}
	api := base.String()
	if host := strings.ToLower(base.Hostname()); h.Type == BitbucketCloud && (host == "bitbucket.org" || host == "api.bitbucket.org") {
		api = "https://api.bitbucket.org"
	}
	return Bitbucket{Type: h.Type, API: api, Token: h.Token, HTTP: hc}, nil
}

// Op names a request in errors: "bitbucket-cloud: POST /2.0/...".
func (b Bitbucket) Op(method, path string) string {
	return string(b.Type) + ": " + method + " " + path
}

// CallJSON is Call with in marshalled as the JSON body (nil: no body).
func (b Bitbucket) CallJSON(ctx context.Context, method, path string, in, out any, accept ...int) (int, error) {
	if in == nil {
		return b.Call(ctx, method, path, "", nil, out, accept...)
	}
	payload, err := json.Marshal(in)
	if err != nil {
		return 0, &PermanentError{Err: fmt.Errorf("%s: %w", b.Op(method, path), err)}
	}
	return b.Call(ctx, method, path, "application/json", payload, out, accept...)
}

// Call sends method path (escaped, from the API's root, with its query)
// with body of contentType ("" and nil: none), and decodes a 2xx answer
// into out (nil: none). An answer whose code is in accept is returned
// without error and undecoded; any other non-2xx is classified (Refused).
// A 2xx answer over MaxAnswerBytes wraps ErrTooLarge.
func (b Bitbucket) Call(ctx context.Context, method, path, contentType string, body []byte, out any, accept ...int) (int, error) {
	op := b.Op(method, path)
	resp, data, err := b.Send(ctx, method, path, contentType, body, MaxAnswerBytes)
	if err != nil {
		return 0, err
	}
	switch {
	case slices.Contains(accept, resp.StatusCode):
		return resp.StatusCode, nil
	case resp.StatusCode/100 != 2:
		return resp.StatusCode, b.Refused(op, resp, data, nil)
	case len(data) > MaxAnswerBytes:
		return resp.StatusCode, fmt.Errorf("%s: more than %d bytes: %w", op, MaxAnswerBytes, ErrTooLarge)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, b.Refused(op, resp, data, err)
		}
	}
	return resp.StatusCode, nil
}

// Send makes one request and returns the answer with at most limit+1 bytes
// of its body, read even on success so that the connection can be reused.
// Its error is a request that was not made or got no answer, classified.
func (b Bitbucket) Send(ctx context.Context, method, path, contentType string, body []byte, limit int64) (*http.Response, []byte, error) {
	op := b.Op(method, path)
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.API+path, r)
	if err != nil {
		return nil, nil, &PermanentError{Err: fmt.Errorf("%s: %w", op, err)}
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+b.Token)
	hc := b.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, transportError(op, err, b.Token)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, nil, transportError(op, err, b.Token)
	}
	return resp, data, nil
}

// Refused classifies an answer to op: resp nil is a request that got no
// answer (err); a 2xx is one whose body could not be decoded (err);
// otherwise resp's code with what body says. The token is scrubbed.
func (b Bitbucket) Refused(op string, resp *http.Response, body []byte, err error) error {
	switch {
	case resp == nil:
		return transportError(op, err, b.Token)
	case resp.StatusCode/100 == 2:
		return undecodedError(op, resp.StatusCode, err, b.Token)
	}
	message := bitbucketServerMessage
	if b.Type == BitbucketCloud {
		message = bitbucketCloudMessage
	}
	return httpStatusError(op, resp.StatusCode, resp.Header, message(body), b.Token)
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
