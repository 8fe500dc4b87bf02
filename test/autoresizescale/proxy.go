package main

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sync"
	"time"
)

// countingProxy is a reverse proxy in front of the Git host that counts
// the requests claimwarden sends it, reads and writes, by endpoint.
type countingProxy struct {
	srv *http.Server
	url string
	mu  sync.Mutex
	n   counts
}

// counts are requests, by kind and by endpoint (its path with the
// repository, branch and file names left out); Conditional the reads
// with an If-None-Match, NotModified those answered 304 (which GitHub
// does not count against its rate limit).
type counts struct {
	Reads, Writes            int
	Conditional, NotModified int
	ByEndpoint               map[string]int
}

func (c counts) minus(o counts) counts {
	out := counts{Reads: c.Reads - o.Reads, Writes: c.Writes - o.Writes, Conditional: c.Conditional - o.Conditional,
		NotModified: c.NotModified - o.NotModified, ByEndpoint: map[string]int{}}
	for k, v := range c.ByEndpoint {
		if d := v - o.ByEndpoint[k]; d != 0 {
			out.ByEndpoint[k] = d
		}
	}
	return out
}

// repoPath matches the repository part of a Gitea API path, firstSegment
// the segment after it.
var (
	repoPath     = regexp.MustCompile(`^/api/v1/repos/[^/]+/[^/]+`)
	firstSegment = regexp.MustCompile(`^/[^/]+`)
)

// endpoint names a request by method and path, the repository left out
// and the path cut after its first segment under the repository.
func endpoint(r *http.Request) string {
	p := r.URL.Path
	if loc := repoPath.FindStringIndex(p); loc != nil {
		rest := p[loc[1]:]
		if m := firstSegment.FindString(rest); m != "" {
			rest = m
		}
		p = "/api/v1/repos/{repo}" + rest
	}
	return r.Method + " " + p
}

func startCountingProxy(target string) (*countingProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{url: "http://" + l.Addr().String(), n: counts{ByEndpoint: map[string]int{}}}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.StatusCode == http.StatusNotModified {
			p.mu.Lock()
			p.n.NotModified++
			p.mu.Unlock()
		}
		return nil
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			p.n.Reads++
			if r.Header.Get("If-None-Match") != "" {
				p.n.Conditional++
			}
		} else {
			p.n.Writes++
		}
		p.n.ByEndpoint[endpoint(r)]++
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(l) }()
	return p, nil
}

// counts are the requests so far.
func (p *countingProxy) counts() counts {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := counts{Reads: p.n.Reads, Writes: p.n.Writes, Conditional: p.n.Conditional, NotModified: p.n.NotModified, ByEndpoint: map[string]int{}}
	for k, v := range p.n.ByEndpoint {
		out.ByEndpoint[k] = v
	}
	return out
}

func (p *countingProxy) close() { _ = p.srv.Close() }
