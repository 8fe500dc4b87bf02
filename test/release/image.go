package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// nonroot is the user the image runs as: 65532, "nonroot" as in distroless,
// which the Deployment's runAsUser names too.
const nonroot = 65532

// binaryPath is where the binary lives in the image, its entrypoint.
const binaryPath = "/usr/local/bin/claimwarden"

// imageOptions describes one multi-platform image.
type imageOptions struct {
	// Binaries maps a platform ("linux/amd64") to its static binary.
	Binaries map[string]string
	// CACerts is the PEM bundle installed as /etc/ssl/certs/ca-certificates.crt.
	CACerts  string
	Version  string
	Revision string
	Source   string
	// Created stamps the config and every file, so equal inputs give equal digests.
	Created time.Time
}

func (o imageOptions) withDefaults() imageOptions {
	if o.Source == "" {
		o.Source = "https://github.com/claimwarden/claimwarden"
	}
	if o.Created.IsZero() {
		o.Created = time.Unix(0, 0).UTC()
	}
	return o
}

func imageCmd(args []string) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	var o imageOptions
	bins := fs.String("binaries", "", "comma-separated os/arch=path of the static binaries, e.g. linux/amd64=bin/linux-amd64/claimwarden")
	fs.StringVar(&o.CACerts, "cacerts", "", "PEM bundle of CA certificates (Debian's ca-certificates)")
	fs.StringVar(&o.Version, "version", "", "version label, e.g. v0.1.0")
	fs.StringVar(&o.Revision, "revision", "", "Git commit label")
	out := fs.String("out", "", "OCI layout directory written (replaced)")
	epoch := fs.Int64("source-date-epoch", 0, "seconds since 1970 stamped on the image ($SOURCE_DATE_EPOCH)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := required(fs, "binaries", "cacerts", "version", "out"); err != nil {
		return err
	}
	o.Binaries = map[string]string{}
	for _, kv := range strings.Split(*bins, ",") {
		platform, path, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("-binaries: %q is not os/arch=path", kv)
		}
		o.Binaries[platform] = path
	}
	o.Created = time.Unix(*epoch, 0).UTC()
	idx, err := buildIndex(o)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(*out); err != nil {
		return err
	}
	if _, err := layout.Write(*out, idx); err != nil {
		return fmt.Errorf("writing %s: %w", *out, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Println(d)
	return nil
}

// buildIndex assembles one image per platform, in the order of their names,
// and wraps them in an OCI index.
func buildIndex(o imageOptions) (v1.ImageIndex, error) {
	o = o.withDefaults()
	if len(o.Binaries) == 0 {
		return nil, errors.New("no binaries")
	}
	certs, err := os.ReadFile(o.CACerts)
	if err != nil {
		return nil, fmt.Errorf("CA certificates: %w", err)
	}
	if !bytes.Contains(certs, []byte("BEGIN CERTIFICATE")) {
		return nil, fmt.Errorf("CA certificates %s: no PEM certificate in it", o.CACerts)
	}
	base, err := layerOf(o.Created, baseFiles(certs))
	if err != nil {
		return nil, err
	}
	var adds []mutate.IndexAddendum
	for _, platform := range slices.Sorted(maps.Keys(o.Binaries)) {
		img, p, err := platformImage(o, base, platform)
		if err != nil {
			return nil, err
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: p}})
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	return mutate.Annotations(idx, o.labels()).(v1.ImageIndex), nil
}

func platformImage(o imageOptions, base v1.Layer, platform string) (v1.Image, *v1.Platform, error) {
	p, err := v1.ParsePlatform(platform)
	if err != nil {
		return nil, nil, fmt.Errorf("platform %q: %w", platform, err)
	}
	bin, err := os.ReadFile(o.Binaries[platform])
	if err != nil {
		return nil, nil, fmt.Errorf("binary for %s: %w", platform, err)
	}
	app, err := layerOf(o.Created, []file{{path: binaryPath, mode: 0o555, data: bin}})
	if err != nil {
		return nil, nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), base, app)
	if err != nil {
		return nil, nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: o.Created}
	cf.Config.User = fmt.Sprintf("%d:%d", nonroot, nonroot)
	cf.Config.Entrypoint = []string{binaryPath}
	cf.Config.WorkingDir = "/"
	cf.Config.Env = []string{"PATH=/usr/local/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}
	cf.Config.Labels = o.labels()
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, nil, err
	}
	return mutate.Annotations(img, o.labels()).(v1.Image), p, nil
}

// labels are the OCI annotations registries and scanners read.
func (o imageOptions) labels() map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":    "claimwarden",
		"org.opencontainers.image.version":  o.Version,
		"org.opencontainers.image.source":   o.Source,
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.created":  o.Created.Format(time.RFC3339),
	}
	if o.Revision != "" {
		l["org.opencontainers.image.revision"] = o.Revision
	}
	return l
}

type file struct {
	path string
	mode int64
	data []byte // nil for a directory
}

// baseFiles are everything the image holds besides the binary: no shell, no
// package manager, only what a Go program reaching HTTPS APIs as nonroot needs.
func baseFiles(certs []byte) []file {
	return []file{
		{path: "/etc/", mode: 0o755},
		{path: "/etc/passwd", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", nonroot, nonroot))},
		{path: "/etc/group", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", nonroot))},
		{path: "/etc/ssl/", mode: 0o755},
		{path: "/etc/ssl/certs/", mode: 0o755},
		{path: "/etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: certs},
		{path: "/home/", mode: 0o755},
		{path: "/home/nonroot/", mode: 0o700},
		{path: "/tmp/", mode: 0o1777},
		{path: "/usr/", mode: 0o755},
		{path: "/usr/local/", mode: 0o755},
		{path: "/usr/local/bin/", mode: 0o755},
	}
}

// layerOf writes files, in order, into an uncompressed tar and makes a gzip
// layer of it; directories of nonroot's home are owned by it.
func layerOf(created time.Time, files []file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: strings.TrimPrefix(f.path, "/"), Mode: f.mode, ModTime: created, Format: tar.FormatPAX}
		if f.data == nil {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(f.data))
		}
		if strings.HasPrefix(f.path, "/home/nonroot") {
			h.Uid, h.Gid = nonroot, nonroot
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, tarball.WithMediaType(types.OCILayer))
}
