// Package faultproxy is a reverse proxy for tests that puts a Git host (the
// real Gitea of test/gitea) behind a storm: for a set period it answers the
// requests it is told to with 5xx and 429, half of them with Retry-After (in
// seconds or as an HTTP date), and checks that clients wait as told. Outside
// a storm it forwards everything and records the commit statuses it forwards.
//
//	p, _ := faultproxy.New(giteaURL, faultproxy.StatusPosts("claimwarden/shop"))
//	defer p.Close()
//	p.Storm(30*time.Second, 3*time.Second)
//	... // point the client at p.URL
//	st := p.Stats() // refused, early retries, forwarded statuses
package faultproxy

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultSlack is Proxy.Slack's value from New.
const DefaultSlack = time.Second

// Match picks the requests a storm answers and whose statuses are recorded.
type Match func(*http.Request) bool

// StatusPosts matches commit-status posts (POST .../statuses/<sha>) to the
// repository owner/name only: a controller watching every namespace may post
// for other tests' repositories on the same host name.
func StatusPosts(repo string) Match {
	prefix := "/api/v1/repos/" + repo + "/statuses/"
	return func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, prefix)
	}
}

// fault is one answer of the storm's cycle.
type fault struct {
	code int
	// retryAfter: "" none, "seconds" or "date".
	retryAfter string
}

// cycle is the order a storm answers in: every 5xx a Git host gives under
// load, and both forms of Retry-After on 429 and 503.
var cycle = []fault{
	{http.StatusInternalServerError, ""},
	{http.StatusTooManyRequests, "seconds"},
	{http.StatusBadGateway, ""},
	{http.StatusServiceUnavailable, "seconds"},
	{http.StatusTooManyRequests, "date"},
	{http.StatusGatewayTimeout, ""},
	{http.StatusServiceUnavailable, "date"},
}

// Posted is one commit status the proxy forwarded.
type Posted struct {
	SHA                         string
	Context, State, Description string
	At                          time.Time
	// Code is the host's answer.
	Code int
}

// Stats is what the proxy saw.
type Stats struct {
	// Refused counts the storm's answers per status code.
	Refused map[int]int
	// WithRetryAfter counts the refusals that said when to come back.
	WithRetryAfter int
	// Early lists the matching requests that came while a Retry-After the
	// proxy gave was still running (beyond Proxy.Slack): a client ignoring
	// it.
	Early []time.Time
	// Forwarded are the matching status posts passed to the host, in order.
	Forwarded []Posted
}

// Proxy is a running proxy; URL is its address.
type Proxy struct {
	*httptest.Server
	// Slack is how long after a Retry-After answer a request still counts
	// as sent before its client read the answer (another worker's post
	// already on its way), not as one that ignored it. Set it before the
	// first storm.
	Slack time.Duration
	next  http.Handler
	match Match

	mu         sync.Mutex
	stormUntil time.Time
	retryAfter time.Duration
	n          int
	// quietUntil is the end of the longest Retry-After given, and quietFrom
	// when it was given: a matching request in between (beyond Slack) is
	// early.
	quietFrom, quietUntil time.Time
	stats                 Stats
}

// New starts a proxy to target; only requests that match are stormed and
// recorded.
func New(target string, match Match) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	p := &Proxy{Slack: DefaultSlack, next: httputil.NewSingleHostReverseProxy(u), match: match, stats: Stats{Refused: map[int]int{}}}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	return p, nil
}

// Storm makes the proxy refuse every matching request for d from now (0
// ends a storm); retryAfter is what its Retry-After answers say (whole
// seconds, at least 1).
func (p *Proxy) Storm(d, retryAfter time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stormUntil = time.Now().Add(d)
	p.retryAfter = max(retryAfter.Round(time.Second), time.Second)
}

// StormUntil is when the current (or last) storm ends.
func (p *Proxy) StormUntil() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stormUntil
}

// Stats returns a copy of what the proxy saw so far.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Stats{Refused: map[int]int{}, WithRetryAfter: p.stats.WithRetryAfter}
	for k, v := range p.stats.Refused {
		s.Refused[k] = v
	}
	s.Early = append(s.Early, p.stats.Early...)
	s.Forwarded = append(s.Forwarded, p.stats.Forwarded...)
	return s
}

// Total is the number of refusals.
func (s Stats) Total() int {
	n := 0
	for _, v := range s.Refused {
		n += v
	}
	return n
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	if !p.match(r) {
		p.next.ServeHTTP(w, r)
		return
	}
	now := time.Now()
	p.mu.Lock()
	if now.After(p.quietFrom.Add(p.Slack)) && now.Before(p.quietUntil) {
		p.stats.Early = append(p.stats.Early, now)
	}
	if now.Before(p.stormUntil) {
		f := cycle[p.n%len(cycle)]
		p.n++
		p.stats.Refused[f.code]++
		if f.retryAfter != "" {
			p.stats.WithRetryAfter++
			until := now.Add(p.retryAfter)
			if f.retryAfter == "date" {
				// An HTTP date has whole seconds: rounded up, so that the
				// client's wait is at least retryAfter.
				until = until.Truncate(time.Second).Add(time.Second)
				w.Header().Set("Retry-After", until.UTC().Format(http.TimeFormat))
			} else {
				w.Header().Set("Retry-After", strconv.Itoa(int(p.retryAfter/time.Second)))
			}
			if until.After(p.quietUntil) {
				p.quietFrom, p.quietUntil = now, until
			}
		}
		p.mu.Unlock()
		http.Error(w, "storm: "+http.StatusText(f.code), f.code)
		return
	}
	p.mu.Unlock()

	posted, body := readStatus(r)
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := &codeRecorder{ResponseWriter: w, code: http.StatusOK}
	p.next.ServeHTTP(rec, r)
	posted.At, posted.Code = now, rec.code
	p.mu.Lock()
	p.stats.Forwarded = append(p.stats.Forwarded, posted)
	p.mu.Unlock()
}

// readStatus decodes a status post (Gitea's and GitHub's field names).
func readStatus(r *http.Request) (Posted, []byte) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var s struct {
		State, Context, Description string
	}
	_ = json.Unmarshal(body, &s)
	return Posted{SHA: r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:], Context: s.Context, State: s.State, Description: s.Description}, body
}

type codeRecorder struct {
	http.ResponseWriter
	code int
}

func (c *codeRecorder) WriteHeader(code int) {
	c.code = code
	c.ResponseWriter.WriteHeader(code)
}
