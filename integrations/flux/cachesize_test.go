package flux

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	sigsyaml "sigs.k8s.io/yaml"
)

// diskBytes is what the files and directories under dir take on disk, by
// the same rounding to blocks the cache counts with.
func diskBytes(t *testing.T, dir string) int64 {
	t.Helper()
	n, err := dirSize(dir)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// artifactOf serves a directory holding one file of size bytes.
func artifactOf(t *testing.T, srv *artifactServer, name string, size int) *meta.Artifact {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data.yaml"), []byte(name+strings.Repeat("#", size-len(name))), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv.serveDir(t, "/"+name+".tar.gz", dir)
}

// TestFetchBoundsCacheBytes fills the cache far beyond MaxCacheSize: old
// artifacts are evicted before a new one is written, except one in use, and
// the cache directory never holds more than the bound.
func TestFetchBoundsCacheBytes(t *testing.T) {
	srv := newArtifactServer(t)
	cache := t.TempDir()
	const (
		fileSize  = 100 << 10
		maxCache  = 640 << 10
		extracted = 128 << 10
		archive   = 64 << 10
	)
	f := &Fetcher{Dir: cache, Keep: 100, MaxSize: archive, MaxExtractedSize: extracted, MaxCacheSize: maxCache}
	ctx := context.Background()

	pinned := artifactOf(t, srv, "pinned", fileSize)
	pinnedDir, release, err := f.Acquire(ctx, pinned)
	if err != nil {
		t.Fatal(err)
	}
	defer release()

	var dirs []string
	for i := range 12 {
		dir, err := f.Fetch(ctx, artifactOf(t, srv, "a"+strconv.Itoa(i), fileSize))
		if err != nil {
			t.Fatalf("artifact %d: %v", i, err)
		}
		dirs = append(dirs, dir)
		if n := diskBytes(t, cache); n > maxCache {
			t.Fatalf("after artifact %d the cache holds %d bytes, over its bound of %d", i, n, maxCache)
		}
	}
	if _, err := os.Stat(filepath.Join(pinnedDir, "data.yaml")); err != nil {
		t.Errorf("the artifact in use was evicted: %v", err)
	}
	if _, err := os.Stat(dirs[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the least recently used artifact is still cached (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dirs[len(dirs)-1], "data.yaml")); err != nil {
		t.Errorf("the newest artifact is gone: %v", err)
	}
}

// TestFetchRefusesWhenArtifactsInUseFillTheCache: with no artifact left to
// evict, a download is refused rather than written past the bound.
func TestFetchRefusesWhenArtifactsInUseFillTheCache(t *testing.T) {
	srv := newArtifactServer(t)
	cache := t.TempDir()
	f := &Fetcher{Dir: cache, MaxSize: 64 << 10, MaxExtractedSize: 128 << 10, MaxCacheSize: 256 << 10}
	ctx := context.Background()
	_, release, err := f.Acquire(ctx, artifactOf(t, srv, "held", 100<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	a := artifactOf(t, srv, "next", 100<<10)
	_, err = f.Fetch(ctx, a)
	if err == nil || !strings.Contains(err.Error(), a.URL) || !strings.Contains(err.Error(), "artifact cache full") {
		t.Fatalf("err = %v, want a full cache naming %s", err, a.URL)
	}
	if n := diskBytes(t, cache); n > 256<<10 {
		t.Errorf("the cache holds %d bytes, over its bound", n)
	}
}

// TestDeploymentHoldsTheCache: the shipped Deployment's /tmp emptyDir, where
// the cache lives by default, holds DefaultMaxCacheSize; past its sizeLimit
// the kubelet would evict the Pod before the cache evicts an artifact.
func TestDeploymentHoldsTheCache(t *testing.T) {
	data, err := os.ReadFile("../../config/manager/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := sigsyaml.UnmarshalStrict(data, &d); err != nil {
		t.Fatal(err)
	}
	var limit *resource.Quantity
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "tmp" && v.EmptyDir != nil {
			limit = v.EmptyDir.SizeLimit
		}
	}
	if limit == nil {
		t.Fatal("no tmp emptyDir with a sizeLimit")
	}
	if limit.Value() < DefaultMaxCacheSize {
		t.Errorf("the tmp emptyDir holds %s, less than the artifact cache's %d bytes", limit, int64(DefaultMaxCacheSize))
	}
	if DefaultMaxArtifactSize+DefaultMaxExtractedSize > DefaultMaxCacheSize {
		t.Errorf("the default cache cannot hold one download")
	}
}
