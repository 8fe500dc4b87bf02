package githost

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Bounds of Conditional: the answers kept, and the bytes of one and of
// all (a repository's page of 100 open pull requests is about 2 MB on
// GitHub).
const (
	conditionalEntries    = 1024
	conditionalEntryBytes = 4 << 20
	conditionalBytes      = 32 << 20
)

// FromCacheHeader is set on an answer Conditional gave from its cache
// after the host answered 304 Not Modified.
const FromCacheHeader = "X-Claimwarden-From-Cache"

// Conditional makes GET requests conditional: it keeps the ETag and body
// of each successful answer, by host credential, Accept header and URL,
// sends the ETag back as If-None-Match, and answers a 304 Not Modified
// with the kept body as a 200, so that the API clients never see a 304.
// GitHub does not count a 304 against the rate limit; GitLab and Gitea
// answer 304 where they send ETags, and 200 elsewhere, which is kept or
// passed on. Autoresize lists every repository's open pull requests at
// every check, and at rest the listing is the same.
//
// Hand-written: RFC 9111 caches (httpcache is archived) also answer from
// the cache without asking while an answer is fresh (GitHub's are for 60
// seconds), and a read right after a write must see it. Bounded by
// entries and bytes; kept in memory only. A nil *Conditional keeps
// nothing.
type Conditional struct {
	mu      sync.Mutex
	entries *lru.Cache[string, *kept]
	bytes   int
}

// kept is one answer kept.
type kept struct {
	etag   string
	header http.Header
	body   []byte
}

// NewConditional returns an empty Conditional.
func NewConditional() *Conditional {
	c := &Conditional{}
	c.entries, _ = lru.NewWithEvict(conditionalEntries, func(_ string, k *kept) { c.bytes -= len(k.body) })
	return c
}

// client is hc with its GET requests for h (base URL base) made
// conditional by c.
func (c *Conditional) client(h Host, base *url.URL, hc *http.Client) *http.Client {
	if c == nil {
		return hc
	}
	return wrapped(hc, func(next http.RoundTripper) http.RoundTripper {
		return &conditionalTransport{c: c, credential: paceKey(h, base), next: next}
	})
}

func (c *Conditional) get(key string) *kept {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, _ := c.entries.Get(key)
	return k
}

func (c *Conditional) put(key string, k *kept) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries.Remove(key)
	c.entries.Add(key, k)
	c.bytes += len(k.body)
	for c.bytes > conditionalBytes {
		c.entries.RemoveOldest()
	}
}

// conditionalTransport makes one host credential's GET requests
// conditional.
type conditionalTransport struct {
	c          *Conditional
	credential string
	next       http.RoundTripper
}

func (t *conditionalTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.Header.Get("If-None-Match") != "" || req.Header.Get("Range") != "" {
		return t.next.RoundTrip(req)
	}
	key := t.credential + "\x00" + req.Header.Get("Accept") + "\x00" + req.URL.String()
	k := t.c.get(key)
	if k != nil {
		req = req.Clone(req.Context())
		req.Header.Set("If-None-Match", k.etag)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && k != nil:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		_ = resp.Body.Close()
		return fromCache(req, resp, k), nil
	case resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != "":
		return t.keep(key, resp)
	}
	return resp, nil
}

// keep reads resp's body, and keeps it when it is within the bounds; the
// caller reads the whole body either way.
func (t *conditionalTransport) keep(key string, resp *http.Response) (*http.Response, error) {
	if resp.ContentLength > conditionalEntryBytes {
		return resp, nil
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, conditionalEntryBytes+1))
	if err != nil {
		_ = resp.Body.Close()
		return nil, err
	}
	if len(head) > conditionalEntryBytes {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
		return resp, nil
	}
	_ = resp.Body.Close()
	t.c.put(key, &kept{etag: resp.Header.Get("ETag"), header: resp.Header.Clone(), body: head})
	resp.Body = io.NopCloser(bytes.NewReader(head))
	return resp, nil
}

// fromCache is k as the answer to req, with what the 304 said of the rate
// limit and the host (its headers) over the kept ones.
func fromCache(req *http.Request, notModified *http.Response, k *kept) *http.Response {
	header := k.header.Clone()
	for name, values := range notModified.Header {
		header[name] = values
	}
	header.Set(FromCacheHeader, "1")
	header.Set("Content-Length", strconv.Itoa(len(k.body)))
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: notModified.Proto, ProtoMajor: notModified.ProtoMajor, ProtoMinor: notModified.ProtoMinor,
		Header: header, Body: io.NopCloser(bytes.NewReader(k.body)), ContentLength: int64(len(k.body)), Request: req,
	}
}
