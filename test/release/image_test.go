package main

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func testOptions(t *testing.T) imageOptions {
	return imageOptions{
		Binaries: map[string]string{
			"linux/arm64": writeTemp(t, "arm64", "arm64 binary"),
			"linux/amd64": writeTemp(t, "amd64", "amd64 binary"),
		},
		CACerts: writeTemp(t, "ca.crt", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"),
		Version: "v0.1.0",
	}
}

func TestBuildIndexPlatformsUserAndFiles(t *testing.T) {
	idx, err := buildIndex(testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 2 || m.Manifests[0].Platform.Architecture != "amd64" || m.Manifests[1].Platform.Architecture != "arm64" {
		t.Fatalf("index manifests = %+v, want amd64 then arm64", m.Manifests)
	}
	img, err := idx.Image(m.Manifests[1].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || cf.Architecture != "arm64" || len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != binaryPath {
		t.Errorf("config: user %q arch %q entrypoint %q, want 65532:65532, arm64, [%s]", cf.Config.User, cf.Architecture, cf.Config.Entrypoint, binaryPath)
	}
	files := imageFiles(t, img)
	if files[binaryPath] != "arm64 binary" {
		t.Errorf("%s = %q, want the arm64 binary", binaryPath, files[binaryPath])
	}
	for _, f := range []string{"etc/passwd", "etc/ssl/certs/ca-certificates.crt"} {
		if files["/"+f] == "" {
			t.Errorf("image lacks /%s", f)
		}
	}
	if _, shell := files["/bin/sh"]; shell {
		t.Error("image has a shell")
	}
}

func TestBuildIndexIsReproducible(t *testing.T) {
	o := testOptions(t)
	digest := func() v1.Hash {
		idx, err := buildIndex(o)
		if err != nil {
			t.Fatal(err)
		}
		d, err := idx.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if a, b := digest(), digest(); a != b {
		t.Errorf("two builds of the same inputs: %s and %s", a, b)
	}
}

func TestBuildIndexRejectsBundleWithoutCertificates(t *testing.T) {
	o := testOptions(t)
	o.CACerts = writeTemp(t, "empty.crt", "")
	if _, err := buildIndex(o); err == nil {
		t.Error("an empty CA bundle was accepted")
	}
}

func imageFiles(t *testing.T, img v1.Image) map[string]string {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(tr)
			files["/"+h.Name] = string(data)
		}
		rc.Close()
	}
	return files
}
