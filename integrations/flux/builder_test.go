package flux

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/opencontainers/go-digest"
)

func TestBuilderCaches(t *testing.T) {
	srv := newArtifactServer(t)
	a := srv.serveDir(t, "/gitrepository/flux-system/repo/1.tar.gz", repoDir)
	b := &Builder{Fetcher: &Fetcher{Dir: t.TempDir()}}
	ctx := context.Background()
	ks := kustomization()

	check := func(step string, builds int64, requests int) {
		t.Helper()
		if got := b.builds.Load(); got != builds {
			t.Errorf("%s: %d builds in all, want %d", step, got, builds)
		}
		if got := srv.requests(a.Path); got != requests {
			t.Errorf("%s: %d downloads in all, want %d", step, got, requests)
		}
	}

	first, err := b.Build(ctx, ks, a)
	if err != nil {
		t.Fatal(err)
	}
	checkKustomizationBuild(t, first, ks.Spec.PostBuild.Substitute)
	check("first build", 1, 1)

	// The caller owns its Result: changing it does not change the cache.
	find(t, first.Objects, "StatefulSet", "db", "pre-pg-suf").SetName("changed")
	again, err := b.Build(ctx, ks, a)
	if err != nil {
		t.Fatal(err)
	}
	check("same key", 1, 1)
	checkKustomizationBuild(t, again, ks.Spec.PostBuild.Substitute)

	ks.Generation++
	ks.Spec.NamePrefix = "new-"
	r, err := b.Build(ctx, ks, a)
	if err != nil {
		t.Fatal(err)
	}
	check("new generation", 2, 1) // rebuilt from the cached artifact
	find(t, r.Objects, "StatefulSet", "db", "new-pg-suf")

	ks.Spec.PostBuild.Substitute["DATA_SIZE"] = "20Gi" // as if it came from a changed ConfigMap
	r, err = b.Build(ctx, ks, a)
	if err != nil {
		t.Fatal(err)
	}
	check("new variables", 3, 1)
	sts := find(t, r.Objects, "StatefulSet", "db", "new-pg-suf")
	if got := claimTemplate(t, sts)["spec"].(map[string]any)["resources"].(map[string]any)["requests"].(map[string]any)["storage"]; got != "20Gi" {
		t.Errorf("storage = %v after the variable changed, want 20Gi", got)
	}

	// A new revision of the source is a new artifact.
	next := srv.serveDir(t, "/gitrepository/flux-system/repo/2.tar.gz", repoDir)
	next.Digest = digest.FromString("other files").String() // refused
	if _, err := b.Build(ctx, ks, next); err == nil || !strings.Contains(err.Error(), "Kustomization flux-system/apps: artifact "+next.URL) {
		t.Errorf("a corrupt artifact: err = %v", err)
	}
	check("corrupt artifact", 3, 1)
}

func TestBuilderConcurrentCallsBuildOnce(t *testing.T) {
	srv := newArtifactServer(t)
	a := srv.serveDir(t, "/a.tar.gz", repoDir)
	b := &Builder{Fetcher: &Fetcher{Dir: t.TempDir()}}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			if _, err := b.Build(context.Background(), kustomization(), a); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := b.builds.Load(); n != 1 {
		t.Errorf("8 concurrent calls for one key built %d times, want 1", n)
	}
	if n := srv.requests("/a.tar.gz"); n != 1 {
		t.Errorf("8 concurrent calls downloaded %d times, want 1", n)
	}
}

func TestBuilderErrors(t *testing.T) {
	srv := newArtifactServer(t)
	b := &Builder{Fetcher: &Fetcher{Dir: t.TempDir()}}
	ctx := context.Background()
	if _, err := b.Build(ctx, kustomization(), nil); err == nil || !strings.Contains(err.Error(), "Kustomization flux-system/apps: its source has no artifact") {
		t.Errorf("no artifact: err = %v", err)
	}
	a := srv.serveDir(t, "/a.tar.gz", filepath.Join(repoDir, "plain"))
	srv.mu.Lock()
	delete(srv.files, "/a.tar.gz")
	srv.mu.Unlock()
	if _, err := b.Build(ctx, kustomization(), a); !errors.Is(err, ErrArtifactNotFound) {
		t.Errorf("artifact gone from the server: err = %v, want ErrArtifactNotFound", err)
	}
	if _, err := (&Builder{}).Build(ctx, kustomization(), a); err == nil {
		t.Error("a Builder without a Fetcher built")
	}
}
