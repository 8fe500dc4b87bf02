package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/claimwarden/claimwarden/test/benchkit"
)

// TestProxyCountsWatchesAndPassesTheCredential: a watch is counted while it
// is open and no longer once the client ends it; other API requests and
// 409 answers are counted; the client's Authorization reaches upstream.
func TestProxyCountsWatchesAndPassesTheCredential(t *testing.T) {
	auth := make(chan string, 10)
	upstream := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth <- r.Header.Get("Authorization")
		switch {
		case benchkit.IsWatch(r.URL):
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case r.Method == http.MethodPut:
			w.WriteHeader(http.StatusConflict)
		}
	}))
	upstream.EnableHTTP2 = true
	upstream.StartTLS()
	t.Cleanup(upstream.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: upstream.Certificate().Raw})
	p, err := startProxy(&rest.Config{Host: upstream.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.close)

	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(p.caPEM) {
		t.Fatal("the proxy's caPEM holds no certificate")
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	do := func(ctx context.Context, method, path string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, p.URL()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer spoke-token")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	watchCtx, endWatch := context.WithCancel(context.Background())
	defer endWatch()
	resp := do(watchCtx, http.MethodGet, "/api/v1/pods?watch=true")
	defer resp.Body.Close()
	if got := p.counts(); got.Watches != 1 || got.Requests != 0 || got.Conns != 1 {
		t.Errorf("with one watch open: %+v, want 1 watch, 0 requests, 1 connection", got)
	}
	do(context.Background(), http.MethodGet, "/apis/apps/v1/statefulsets").Body.Close()
	do(context.Background(), http.MethodPut, "/api/v1/namespaces/a/configmaps/b").Body.Close()
	do(context.Background(), http.MethodGet, "/version").Body.Close()
	endWatch()
	err = wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return p.counts().Watches == 0, nil
	})
	if err != nil {
		t.Errorf("the watch is still counted after the client ended it: %+v", p.counts())
	}
	if got := p.counts(); got.Requests != 2 || got.Conflicts != 1 {
		t.Errorf("counts %+v, want 2 API requests (the list and the put; not the watch, not /version) and 1 conflict", got)
	}
	for range 4 {
		if a := <-auth; a != "Bearer spoke-token" {
			t.Errorf("upstream got Authorization %q, want the client's", a)
		}
	}
}

func TestIsAPI(t *testing.T) {
	for path, want := range map[string]bool{
		"/api": true, "/apis": true, "/api/v1/pods": true, "/apis/apps/v1": true,
		"/version": false, "/healthz": false, "/apiextensions": false, "/metrics": false,
	} {
		if got := isAPI(&url.URL{Path: path}); got != want {
			t.Errorf("isAPI(%s) = %v, want %v", path, got, want)
		}
	}
}
