package main

import (
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/claimwarden/claimwarden/test/benchkit"
)

// proxy is one simulated cluster's API server: a TLS reverse proxy on a
// port of its own in front of a real kube-apiserver, which several proxies
// may share. claimwarden sees a distinct server per proxy, and so builds a
// distinct cluster.Cluster (cache, watches, clients) for each; the proxy
// counts what that one cluster.Cluster holds open and sends.
//
// It passes the client's Authorization header through, so the API server
// sees claimwarden's own credential (the cluster Secret's token), and
// terminates TLS with httptest's certificate for 127.0.0.1, which the
// cluster Secret's caData trusts.
type proxy struct {
	srv   *httptest.Server
	caPEM []byte

	mu sync.Mutex
	// watches and conns are open now.
	watches, conns int
	// requests counts the non-watch API requests (the activity that tells
	// whether the controller is quiet); conflicts the 409 answers.
	requests, conflicts int
}

// proxyCounts is a copy of a proxy's counters.
type proxyCounts struct {
	Watches, Conns, Requests, Conflicts int
}

// startProxy serves on a free loopback port and forwards to upstream's
// host, trusting upstream's CA; upstream carries no credential.
func startProxy(upstream *rest.Config) (*proxy, error) {
	// Only the CA: the client's Authorization header passes through.
	rp, err := benchkit.NewReverseProxy(&rest.Config{Host: upstream.Host, TLSClientConfig: rest.TLSClientConfig{CAData: upstream.CAData}})
	if err != nil {
		return nil, err
	}
	p := &proxy{}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		watch := benchkit.IsWatch(r.URL)
		p.arrived(watch, isAPI(r.URL))
		sw := benchkit.NewStatusWriter(w)
		// Deferred: the reverse proxy ends a stream the client dropped
		// (every watch it stops) by panicking with http.ErrAbortHandler.
		defer func() { p.finished(watch, sw.Code) }()
		rp.ServeHTTP(sw, r)
	}))
	p.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	p.srv.Config.ConnState = p.connState
	// HTTP/2, as client-go speaks with kube-apiserver: its watches of one
	// server share one connection.
	p.srv.EnableHTTP2 = true
	p.srv.StartTLS()
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw})
	return p, nil
}

// URL is the proxy's https URL.
func (p *proxy) URL() string { return p.srv.URL }

// close drops every connection (the controller is stopped first) and stops serving.
func (p *proxy) close() {
	p.srv.CloseClientConnections()
	p.srv.Close()
}

func (p *proxy) arrived(watch, api bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case watch:
		p.watches++
	case api:
		p.requests++
	}
}

func (p *proxy) finished(watch bool, code int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if watch {
		p.watches--
	}
	if code == http.StatusConflict {
		p.conflicts++
	}
}

func (p *proxy) connState(_ net.Conn, s http.ConnState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch s {
	case http.StateNew:
		p.conns++
	case http.StateClosed, http.StateHijacked:
		p.conns--
	}
}

func (p *proxy) counts() proxyCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	return proxyCounts{Watches: p.watches, Conns: p.conns, Requests: p.requests, Conflicts: p.conflicts}
}

// isAPI: a request for an API resource or discovery, not /version,
// /healthz or the like, which the spokes' probes ask every 30 s whatever
// the controller does.
func isAPI(u *url.URL) bool {
	return strings.HasPrefix(u.Path, "/api/") || strings.HasPrefix(u.Path, "/apis/") || u.Path == "/api" || u.Path == "/apis"
}
