package policies

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// engManyFilesBundle is a gzipped bundle tarball of n data files of size
// bytes each, written by hand: OPA's writer puts all data in one file.
func engManyFilesBundle(t testing.TB, n, size int) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	add := func(name string, body []byte) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	add("/.manifest", []byte(`{"revision": "many"}`))
	add("/claims.rego", []byte(engOrgPolicy))
	add("/org/data.json", []byte(`{"max_gib": 100}`))
	value := []byte(`"` + strings.Repeat("a", size-2) + `"`)
	for i := range n {
		add(fmt.Sprintf("/filler/f%d/data.json", i), value)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestEngineBundleTotalSizeIsBounded(t *testing.T) {
	// 65 files of 1 MiB, each under the per-file limit: over the default
	// total of 64 MiB, though the download is small.
	body := engManyFilesBundle(t, 65, 1<<20)
	srv := engServeBundle(t, body)
	e := engBundleEngine(t, srv, "", nil)
	err := e.Reload(context.Background())
	want := fmt.Sprintf("bundle org unpacks to more than %d bytes (totalSizeLimitBytes)", DefaultBundleTotalSizeLimit)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Reload: %v, want %q (download %d bytes)", err, want, len(body))
	}
	if st := e.Status(); st.Ready || !strings.Contains(st.Message, want) {
		t.Fatalf("status: %+v", st)
	}
	if v := e.Evaluate(context.Background(), engInput(0, 10, 20)); v.Allowed {
		t.Fatal("a refused bundle let a claim change through")
	}

	// Within a configured limit the same layout loads.
	small := engServeBundle(t, engManyFilesBundle(t, 3, 100<<10))
	ok := engBundleEngine(t, small, "", func(b *BundleSource) { b.TotalSizeLimitBytes = 1 << 20 })
	if err := ok.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := engDenied(ok.Evaluate(context.Background(), engInput(0, 10, 200))); got != "org-max: over 100 GiB" {
		t.Fatalf("small bundle: %q", got)
	}
	tight := engBundleEngine(t, small, "", func(b *BundleSource) { b.TotalSizeLimitBytes = 200 << 10 })
	if err := tight.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "bundle org unpacks to more than 204800 bytes") {
		t.Fatalf("Reload under a 200 KiB limit: %v", err)
	}
}

// engTrickle serves the bundle it holds until trickling is set; then it
// answers 200 and sends one byte every 10ms, for 10s at most, so a client
// without a deadline hangs that long.
type engTrickle struct {
	body     []byte
	trickle  atomic.Bool
	requests atomic.Int32
}

func (s *engTrickle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	if !s.trickle.Load() {
		w.Header().Set("ETag", fmt.Sprintf(`"%d"`, s.requests.Load()))
		_, _ = w.Write(s.body)
		return
	}
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	stop := time.After(10 * time.Second)
	for i := 0; ; i++ {
		select {
		case <-r.Context().Done():
			return
		case <-stop:
			return
		case <-tick.C:
			_, _ = w.Write(s.body[i%len(s.body) : i%len(s.body)+1])
			w.(http.Flusher).Flush()
		}
	}
}

func TestEngineBundleDownloadDeadline(t *testing.T) {
	const timeout = 300 * time.Millisecond
	srv := &engTrickle{body: engOrgBundle(t, "v1", 100, "")}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	newEngine := func() *Engine {
		return engNew(t, Options{Bundles: []BundleSource{{
			Name: "org", URL: hs.URL + "/org.tar.gz", Trigger: "manual", DownloadTimeout: timeout,
		}}})
	}
	want := "bundle org: download not finished within 300ms (downloadTimeout)"

	// Loaded once, then the server trickles: the last good bundle decides
	// and Status says it is stale.
	e := newEngine()
	if err := e.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv.trickle.Store(true)
	start := time.Now()
	err := e.Reload(context.Background())
	if took := time.Since(start); err == nil || !strings.Contains(err.Error(), want) || took > 3*time.Second {
		t.Fatalf("Reload from a trickling server: %v after %s, want %q", err, took, want)
	}
	st := e.Status()
	if !st.Ready || !st.Stale || !strings.Contains(st.Message, "bundle org: last fetch failed") || !strings.Contains(st.Message, want) {
		t.Fatalf("status: %+v", st)
	}
	if got := engDenied(e.Evaluate(context.Background(), engInput(0, 10, 200))); got != "org-max: over 100 GiB" {
		t.Fatalf("the last good bundle must decide: %q", got)
	}

	// Never loaded: fail closed.
	fresh := newEngine()
	if err := fresh.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("first Reload: %v", err)
	}
	if st := fresh.Status(); st.Ready || !strings.Contains(st.Message, want) {
		t.Fatalf("status: %+v", st)
	}
	if v := fresh.Evaluate(context.Background(), engInput(0, 10, 20)); v.Allowed {
		t.Fatal("allowed without the bundle")
	}
}

func TestEngineBundleBoundedClientKeepsTLSAndToken(t *testing.T) {
	// The bounded transport wraps OPA's own client: the configured CA and
	// bearer token still apply.
	body := engOrgBundle(t, "v1", 100, "")
	hs := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(hs.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hs.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	e := engNew(t, Options{Bundles: []BundleSource{{
		Name: "org", URL: hs.URL + "/org.tar.gz", Trigger: "manual", CACertFile: ca, Token: "s3cret",
	}}})
	if err := e.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := engDenied(e.Evaluate(context.Background(), engInput(0, 10, 200))); got != "org-max: over 100 GiB" {
		t.Fatalf("got %q", got)
	}
}
