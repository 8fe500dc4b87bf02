package app

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// TestCheckKustomizeFetchesNothing: `check -k` builds as the Flux
// integration does, and so refuses what a kustomization would fetch: no
// HTTP request, no connection, no git run, exit 2 naming the file and the
// reference.
func TestCheckKustomizeFetchesNothing(t *testing.T) {
	var requests, dials atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		_, _ = w.Write([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fetched\n"))
	}))
	defer srv.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			_ = c.Close()
		}
	}()
	bin, marker := t.TempDir(), filepath.Join(t.TempDir(), "git-ran")
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\necho \"$@\" >> "+marker+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)

	sts, err := os.ReadFile("testdata/check/kustomize/statefulsets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{
		srv.URL + "/cm.yaml",
		"https://" + l.Addr().String() + "/repo.git//path?ref=x",
		"ssh://git@" + l.Addr().String() + "/repo.git//path",
		"git@" + l.Addr().String() + ":org/repo//path",
	} {
		dir := t.TempDir()
		k := "resources:\n- statefulsets.yaml\n- " + ref + "\n"
		if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "statefulsets.yaml"), sts, 0o644); err != nil {
			t.Fatal(err)
		}
		code, out := runCheckCLI(t, nil, "-k", dir, "--base", "testdata/check/grow/base")
		if code != 2 {
			t.Errorf("%s: exit code %d, want 2:\n%s", ref, code, out)
		}
		if !strings.Contains(out, "kustomization.yaml: resources: remote reference \""+proposal.RedactURL(ref)+"\" refused") {
			t.Errorf("%s: output names neither the file nor the reference:\n%s", ref, out)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("check sent %d HTTP requests", n)
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("check opened %d TCP connections", n)
	}
	if ran, err := os.ReadFile(marker); err == nil {
		t.Errorf("check ran git: %s", ran)
	}
}
