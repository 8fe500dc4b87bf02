package main

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// What image writes, push sends: the registry then serves the same index
// digest, both platforms resolvable.
func TestPushKeepsTheIndexDigest(t *testing.T) {
	idx, err := buildIndex(testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "image")
	if _, err := layout.Write(dir, idx); err != nil {
		t.Fatal(err)
	}
	want, _ := idx.Digest()
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	to := strings.TrimPrefix(srv.URL, "http://") + "/claimwarden:v0.1.0"
	if err := pushCmd([]string{"-layout", dir, "-to", to, "-insecure"}); err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(to, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	got, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := got.Digest(); d != want {
		t.Errorf("the registry serves %s, image wrote %s", d, want)
	}
	m, err := got.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, desc := range m.Manifests {
		if _, err := got.Image(desc.Digest); err != nil {
			t.Errorf("%s: %v", desc.Platform, err)
		}
	}
}
