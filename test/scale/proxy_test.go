package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
)

func TestPatchShape(t *testing.T) {
	for body, want := range map[string]string{
		`{"metadata":{"resourceVersion":"7"},"status":{"conditions":[]}}`:            "metadata{resourceVersion} status{conditions}",
		`{"apiVersion":"v1","kind":"PersistentVolumeClaim","spec":{"resources":{}}}`: "apiVersion kind spec{resources}",
		`[{"op":"add"}]`: "(not a JSON object)",
	} {
		if got := patchShape([]byte(body)); got != want {
			t.Errorf("%s: got %q, want %q", body, got, want)
		}
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		method, url, want string
	}{
		{"PATCH", "/api/v1/namespaces/ns/persistentvolumeclaims/data-db-0?fieldManager=claimwarden&force=true", "PATCH persistentvolumeclaims"},
		{"GET", "/api/v1/persistentvolumeclaims?limit=500&resourceVersion=0", "LIST persistentvolumeclaims"},
		{"GET", "/api/v1/persistentvolumeclaims?allowWatchBookmarks=true&watch=true", "WATCH persistentvolumeclaims"},
		{"GET", "/api/v1/namespaces/ns/persistentvolumeclaims/data-db-0", "GET persistentvolumeclaims"},
		{"PATCH", "/api/v1/namespaces/ns/persistentvolumeclaims/data-db-0?dryRun=All", "DRYRUN-PATCH persistentvolumeclaims"},
		{"PATCH", "/apis/claimwarden.dev/v1alpha1/namespaces/ns/volumeclaimrollouts/db/status", "PATCH volumeclaimrollouts.claimwarden.dev/status"},
		{"PUT", "/apis/claimwarden.dev/v1alpha1/namespaces/ns/volumeclaimrollouts/db/status", "UPDATE volumeclaimrollouts.claimwarden.dev/status"},
		{"POST", "/apis/claimwarden.dev/v1alpha1/namespaces/ns/volumeclaimrollouts", "CREATE volumeclaimrollouts.claimwarden.dev"},
		{"POST", "/apis/events.k8s.io/v1/namespaces/ns/events", "CREATE events.events.k8s.io"},
		{"GET", "/apis/apps/v1/statefulsets?watch=1", "WATCH statefulsets.apps"},
		{"DELETE", "/apis/apps/v1/namespaces/ns/statefulsets", "DELETECOLLECTION statefulsets.apps"},
		{"GET", "/api/v1/namespaces/ns", "GET namespaces"},
		{"GET", "/api/v1/namespaces", "LIST namespaces"},
		{"GET", "/api/v1/nodes/n1/status", "GET nodes/status"},
		{"GET", "/apis/apps/v1", "GET (discovery)"},
		{"GET", "/apis", "GET (discovery)"},
		{"GET", "/version", "GET (non-resource /version)"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := classify(tc.method, u).String(); got != tc.want {
			t.Errorf("%s %s: got %q, want %q", tc.method, tc.url, got, tc.want)
		}
	}
	dry, _ := url.Parse("/api/v1/namespaces/ns/persistentvolumeclaims/data-db-0?dryRun=All")
	if classify("PATCH", dry).write() {
		t.Error("a dry-run PATCH counted as a write: it persists nothing")
	}
}

// TestProxy checks that the proxy forwards bodies unchanged while capturing
// them, counts by verb and code, and streams a watch event by event (through
// benchkit.StatusWriter, which must not hide the Flush the reverse proxy relies on).
func TestProxy(t *testing.T) {
	release := make(chan struct{})
	var gotBody string
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPatch:
			b, _ := io.ReadAll(r.Body)
			gotBody = string(b)
			w.WriteHeader(http.StatusConflict)
		case http.MethodGet:
			fmt.Fprintln(w, `{"type":"ADDED"}`)
			w.(http.Flusher).Flush()
			select { // hold the stream open until the client has read the event
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	defer upstream.Close()
	defer close(release)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: upstream.Certificate().Raw})
	p, err := startProxy(&rest.Config{Host: upstream.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.caPEM)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true,
	}}

	p.setCapturing(true)
	const body = `{"status":{"progress":"3/3"}}`
	req, _ := http.NewRequest(http.MethodPatch, p.url+"/apis/claimwarden.dev/v1alpha1/namespaces/ns/volumeclaimrollouts/db/status", strings.NewReader(body))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || gotBody != body {
		t.Errorf("PATCH: got %d with upstream body %q, want 409 with %q", resp.StatusCode, gotBody, body)
	}
	if got := p.setCapturing(false); len(got) != 1 || got[0].Body != body {
		t.Errorf("captured %+v, want the PATCH with its body", got)
	}

	resp, err = c.Get(p.url + "/api/v1/persistentvolumeclaims?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "{\"type\":\"ADDED\"}\n" {
		t.Fatalf("watch: read %q, %v; want the first event while the stream is open", line, err)
	}
	if resp.ProtoMajor != 2 {
		t.Errorf("proxy spoke %s, want HTTP/2 like kube-apiserver", resp.Proto)
	}

	patch := requestKey{Method: "PATCH", Verb: "PATCH", Resource: "volumeclaimrollouts.claimwarden.dev/status"}
	watchKey := requestKey{Method: "GET", Verb: "WATCH", Resource: "persistentvolumeclaims"}
	// The proxy records a completion after its handler returns, which may be
	// just after the client has the response: poll for it.
	var s proxyCounts
	err = wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		s = p.snapshot()
		return s.done[patch][http.StatusConflict] == 1, nil
	})
	if err != nil || s.arrived[patch] != 1 || s.arrived[watchKey] != 1 {
		t.Errorf("counts: arrived %v, done %v", s.arrived, s.done)
	}
	if got := s.shapes[patch]; got["status{progress}"] != 1 {
		t.Errorf("patch shapes %v, want status{progress} once", got)
	}
}
