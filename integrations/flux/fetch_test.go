package flux

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/opencontainers/go-digest"
)

const repoDir = "testdata/repo"

// cacheEntries lists the names in a Fetcher's cache directory.
func cacheEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func hexOf(t *testing.T, a *meta.Artifact) string {
	t.Helper()
	return digest.Digest(a.Digest).Encoded()
}

func TestFetchExtractsAndCaches(t *testing.T) {
	srv := newArtifactServer(t)
	a := srv.serveDir(t, "/gitrepository/flux-system/repo/abc.tar.gz", repoDir)
	cache := t.TempDir()
	f := &Fetcher{Dir: cache}

	dir, err := f.Fetch(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, hexOf(t, a)); dir != want {
		t.Errorf("extracted into %s, want %s", dir, want)
	}
	got, err := os.ReadFile(filepath.Join(dir, "base", "statefulset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(repoDir, "base", "statefulset.yaml"))
	if string(got) != string(want) {
		t.Errorf("extracted file differs from the original:\n%s", got)
	}

	if _, err := f.Fetch(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if n := srv.requests(a.Path); n != 1 {
		t.Errorf("two fetches of one artifact made %d requests, want 1", n)
	}

	// A new process (a new Fetcher on the same directory) reuses what the
	// last one extracted.
	again := &Fetcher{Dir: cache}
	if d, err := again.Fetch(context.Background(), a); err != nil || d != dir {
		t.Fatalf("Fetch after restart = %q, %v; want %q", d, err, dir)
	}
	if n := srv.requests(a.Path); n != 1 {
		t.Errorf("a fetch after restart downloaded again (%d requests)", n)
	}
}

func TestFetchRefusesDigestMismatch(t *testing.T) {
	srv := newArtifactServer(t)
	a := srv.serveDir(t, "/gitrepository/flux-system/repo/abc.tar.gz", repoDir)
	a.Digest = digest.FromString("something else").String()
	cache := t.TempDir()

	_, err := (&Fetcher{Dir: cache}).Fetch(context.Background(), a)
	if err == nil {
		t.Fatal("an artifact whose digest does not match was accepted")
	}
	for _, want := range []string{a.URL, "digest doesn't match", a.Digest} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if names := cacheEntries(t, cache); len(names) != 0 {
		t.Errorf("a refused artifact left %v in the cache", names)
	}
}

func TestFetchRefusesOversize(t *testing.T) {
	srv := newArtifactServer(t)
	a := srv.serveDir(t, "/gitrepository/flux-system/repo/abc.tar.gz", repoDir)
	limit := *a.Size - 1

	t.Run("announced size", func(t *testing.T) {
		_, err := (&Fetcher{Dir: t.TempDir(), MaxSize: limit}).Fetch(context.Background(), a)
		if err == nil || !strings.Contains(err.Error(), a.URL) || !strings.Contains(err.Error(), "over the limit") {
			t.Fatalf("err = %v, want an over-the-limit error naming %s", err, a.URL)
		}
		if n := srv.requests(a.Path); n != 0 {
			t.Errorf("an artifact announced too big was downloaded (%d requests)", n)
		}
	})
	t.Run("size not announced", func(t *testing.T) {
		unannounced := *a
		unannounced.Size = nil
		cache := t.TempDir()
		_, err := (&Fetcher{Dir: cache, MaxSize: limit}).Fetch(context.Background(), &unannounced)
		if err == nil || !strings.Contains(err.Error(), a.URL) || !strings.Contains(err.Error(), "max download size") {
			t.Fatalf("err = %v, want a max download size error naming %s", err, a.URL)
		}
		if names := cacheEntries(t, cache); len(names) != 0 {
			t.Errorf("a refused artifact left %v in the cache", names)
		}
	})
	t.Run("extracted size", func(t *testing.T) {
		_, err := (&Fetcher{Dir: t.TempDir(), MaxExtractedSize: 100}).Fetch(context.Background(), a)
		if err == nil || !strings.Contains(err.Error(), "bigger than max archive size of 100 bytes") {
			t.Fatalf("err = %v, want the extraction limit to refuse it", err)
		}
	})
}

func TestFetchErrors(t *testing.T) {
	srv := newArtifactServer(t)
	f := &Fetcher{Dir: t.TempDir()}

	gone := &meta.Artifact{URL: srv.URL + "/gitrepository/flux-system/repo/old.tar.gz", Digest: digest.FromString("old").String()}
	if _, err := f.Fetch(context.Background(), gone); !errors.Is(err, ErrArtifactNotFound) || !strings.Contains(err.Error(), gone.URL) {
		t.Errorf("404: err = %v, want ErrArtifactNotFound naming the URL", err)
	}

	crafted := &meta.Artifact{URL: srv.URL + "/x.tar.gz", Digest: "sha256:../../etc"}
	if _, err := f.Fetch(context.Background(), crafted); err == nil || !strings.Contains(err.Error(), `digest "sha256:../../etc"`) {
		t.Errorf("crafted digest: err = %v", err)
	}
	if n := srv.requests("/x.tar.gz"); n != 0 {
		t.Errorf("an artifact with an invalid digest was requested")
	}

	if _, err := f.Fetch(context.Background(), nil); err == nil {
		t.Error("Fetch(nil) succeeded")
	}
}

func TestFetchEvictsLeastRecentlyUsed(t *testing.T) {
	srv := newArtifactServer(t)
	a := srv.serveDir(t, "/a.tar.gz", filepath.Join(repoDir, "base"))
	b := srv.serveDir(t, "/b.tar.gz", filepath.Join(repoDir, "plain"))
	cache := t.TempDir()
	f := &Fetcher{Dir: cache, Keep: 1}
	ctx := context.Background()

	dirA, release, err := f.Acquire(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	dirB, err := f.Fetch(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dirA, "statefulset.yaml")); err != nil {
		t.Fatalf("an artifact in use was removed when evicted: %v", err)
	}
	release()
	if _, err := os.Stat(dirA); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an evicted artifact is still on disk after its release (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dirB, "statefulset.yaml")); err != nil {
		t.Errorf("the kept artifact is gone: %v", err)
	}
	if names := cacheEntries(t, cache); len(names) != 1 || names[0] != hexOf(t, b) {
		t.Errorf("cache holds %v, want only %s", names, hexOf(t, b))
	}

	if _, err := f.Fetch(ctx, a); err != nil {
		t.Fatal(err)
	}
	if n := srv.requests("/a.tar.gz"); n != 2 {
		t.Errorf("an evicted artifact was fetched %d times, want 2 (downloaded again)", n)
	}
}
