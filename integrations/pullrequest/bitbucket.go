package pullrequest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
)

// Both Bitbucket APIs are called over plain net/http with their documented
// paths: no maintained Go client covers them (see gitstatus/bitbucket.go).

// maxAnswerBytes bounds a JSON answer (a page of pull requests or files).
const maxAnswerBytes = 4 << 20

// maxPagesListed bounds the pages of a directory listed.
const maxPagesListed = 40

// bitbucketHTTP sends requests to one Bitbucket API with the token as a
// bearer token, and classifies refusals through classify.
type bitbucketHTTP struct {
	name     string // "bitbucket-cloud", "bitbucket-server": names errors
	api      string // the API's root URL, without a trailing slash
	token    string
	hc       *http.Client
	ids      *Identities
	classify func(op string, resp *http.Response, body []byte, err error, token string) error
}

func (b *bitbucketHTTP) op(method, path string) string {
	return b.name + ": " + method + " " + path
}

// call sends method path (escaped, from the API's root, with its query)
// and decodes a 2xx answer into v (nil: none). An answer whose code is in
// accept is returned without error and undecoded; any other non-2xx is
// classified.
func (b *bitbucketHTTP) call(ctx context.Context, method, path, contentType string, body []byte, v any, accept ...int) (int, error) {
	op := b.op(method, path)
	resp, data, err := b.send(ctx, method, path, contentType, body, maxAnswerBytes)
	if err != nil {
		return 0, err
	}
	switch {
	case slices.Contains(accept, resp.StatusCode):
		return resp.StatusCode, nil
	case resp.StatusCode/100 != 2:
		return resp.StatusCode, b.classify(op, resp, data, nil, b.token)
	case len(data) > maxAnswerBytes:
		return resp.StatusCode, fmt.Errorf("%s: more than %d bytes: %w", op, maxAnswerBytes, ErrTooLarge)
	}
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			return resp.StatusCode, b.classify(op, resp, data, err, b.token)
		}
	}
	return resp.StatusCode, nil
}

// callJSON is call with v marshalled as the body.
func (b *bitbucketHTTP) callJSON(ctx context.Context, method, path string, in, out any, accept ...int) (int, error) {
	payload, err := json.Marshal(in)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", b.op(method, path), err)
	}
	return b.call(ctx, method, path, "application/json", payload, out, accept...)
}

// raw GETs a file's content, bounded by readBounded; 404 wraps ErrNotFound.
func (b *bitbucketHTTP) raw(ctx context.Context, path string) ([]byte, error) {
	op := b.op(http.MethodGet, path)
	resp, data, err := b.send(ctx, http.MethodGet, path, "", nil, MaxFileBytes)
	switch {
	case err != nil:
		return nil, err
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%s: %w", op, ErrNotFound)
	case resp.StatusCode/100 != 2:
		return nil, b.classify(op, resp, data, nil, b.token)
	}
	return readBounded(bytes.NewReader(data), op)
}

// send makes one request and reads at most limit+1 bytes of the answer.
func (b *bitbucketHTTP) send(ctx context.Context, method, path, contentType string, body []byte, limit int64) (*http.Response, []byte, error) {
	op := b.op(method, path)
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, b.api+path, r)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+b.token)
	hc := b.hc
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, b.classify(op, nil, nil, err, b.token)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, nil, b.classify(op, nil, nil, err, b.token)
	}
	return resp, data, nil
}

// multipartForm encodes fields (name, value pairs, in order) as
// multipart/form-data, returning the body and its content type.
func multipartForm(fields [][2]string) ([]byte, string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := w.WriteField(f[0], f[1]); err != nil {
			return nil, "", err
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}
