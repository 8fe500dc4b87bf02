package flux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/http/fetch"
	"github.com/fluxcd/pkg/tar"
	"github.com/go-logr/logr"
	"github.com/opencontainers/go-digest"
	"golang.org/x/sync/singleflight"
)

// Defaults of Fetcher's limits, sized together: a download needs room for
// its archive and its extraction, and the cache (downloads in progress
// included) stays within DefaultMaxCacheSize, which the shipped Deployment's
// 1Gi emptyDir holds with room to spare (config/manager/deployment.yaml).
const (
	DefaultMaxArtifactSize  = 100 << 20
	DefaultMaxExtractedSize = 256 << 20
	DefaultMaxCacheSize     = 768 << 20
	DefaultKeptArtifacts    = 16
)

// ErrArtifactNotFound is returned (wrapped) when the source server answers
// 404, e.g. for an artifact superseded since the source object was read.
var ErrArtifactNotFound = fetch.ErrFileNotFound

// Fetcher downloads the artifacts source-controller serves (the
// status.artifact of a GitRepository, OCIRepository or Bucket), verifies
// their digest, and extracts each once into Dir/<digest hex>, keeping the
// Keep most recently used in at most MaxCacheSize bytes. The download, digest check and extraction are
// fluxcd/pkg/http/fetch's, as in kustomize-controller; unlike it, sizes are
// bounded. The zero value is usable; set the fields before the first Fetch.
type Fetcher struct {
	// Dir is the cache root; empty means <os.TempDir()>/claimwarden-artifacts.
	Dir string
	// MaxSize bounds the downloaded archive in bytes (0: DefaultMaxArtifactSize).
	MaxSize int64
	// MaxExtractedSize bounds the extracted files in bytes (0: DefaultMaxExtractedSize).
	MaxExtractedSize int64
	// Retries is how often a download is retried after a connection error or
	// a 5xx answer (fluxcd/pkg/http/fetch waits 5 to 30 s in between).
	Retries int
	// Keep is how many extracted artifacts stay on disk (0: DefaultKeptArtifacts).
	Keep int
	// MaxCacheSize bounds the bytes on disk under Dir, downloads in progress
	// counted at their worst case, MaxSize + MaxExtractedSize, which it must
	// hold (0: DefaultMaxCacheSize). The archive of a download in progress
	// is written to the system temporary directory, usually Dir's file
	// system.
	MaxCacheSize int64
	// HostOverride replaces the host of artifact URLs, like
	// kustomize-controller's SOURCE_CONTROLLER_LOCALHOST: for a claimwarden
	// running outside the cluster, or reaching source-controller by another
	// address than its Service's.
	HostOverride string
	// Logger receives the HTTP client's errors.
	Logger logr.Logger

	once    sync.Once
	initErr error
	disk    *diskCache
	archive *fetch.ArchiveFetcher
	group   singleflight.Group
}

// Fetch returns the directory the artifact is extracted in, downloading it
// unless it is cached. The directory stays until Keep other artifacts have
// been used since; a caller that reads it while other goroutines fetch
// should use Acquire. Callers must not modify the directory.
func (f *Fetcher) Fetch(ctx context.Context, a *meta.Artifact) (string, error) {
	dir, release, err := f.Acquire(ctx, a)
	if err != nil {
		return "", err
	}
	release()
	return dir, nil
}

// Acquire is Fetch for a caller that reads the directory concurrently with
// other fetches: the directory is not removed before release is called.
func (f *Fetcher) Acquire(ctx context.Context, a *meta.Artifact) (dir string, release func(), err error) {
	if a == nil {
		return "", nil, errors.New("no artifact: the source has not produced one yet")
	}
	key, err := digestKey(a)
	if err != nil {
		return "", nil, err
	}
	if err := f.init(); err != nil {
		return "", nil, err
	}
	// A download is followed by an acquire; with Keep smaller than the
	// number of artifacts being fetched at once, other downloads can evict
	// it in between, so try again a few times.
	for range 3 {
		if dir, release, ok := f.disk.acquire(key); ok {
			return dir, release, nil
		}
		_, err, _ := f.group.Do(key, func() (any, error) {
			return nil, f.download(ctx, a, key)
		})
		if err != nil {
			return "", nil, err
		}
	}
	return "", nil, fmt.Errorf("artifact %s: evicted from the cache before use; raise Fetcher.Keep", a.URL)
}

// digestKey names the artifact's cache directory: the hex of its digest,
// validated so that a crafted digest cannot point outside the cache. Like
// fluxcd/pkg/http/fetch, a digest without an algorithm is sha256.
func digestKey(a *meta.Artifact) (string, error) {
	s := a.Digest
	if s == "" {
		return "", fmt.Errorf("artifact %s: no digest", a.URL)
	}
	if !strings.Contains(s, ":") {
		s = "sha256:" + s
	}
	d, err := digest.Parse(s)
	if err != nil {
		return "", fmt.Errorf("artifact %s: digest %q: %w", a.URL, a.Digest, err)
	}
	return d.Encoded(), nil
}

func (f *Fetcher) init() error {
	f.once.Do(func() {
		dir := f.Dir
		if dir == "" {
			dir = filepath.Join(os.TempDir(), "claimwarden-artifacts")
		}
		keep := f.Keep
		if keep <= 0 {
			keep = DefaultKeptArtifacts
		}
		if f.reservation() > f.maxCacheSize() {
			f.initErr = fmt.Errorf("artifact cache of %d bytes cannot hold a download of up to %d bytes (archive) and %d bytes (extracted)",
				f.maxCacheSize(), f.maxSize(), f.maxExtractedSize())
			return
		}
		f.disk, f.initErr = openDiskCache(dir, keep, f.maxCacheSize())
		f.archive = fetch.New(
			fetch.WithRetries(f.Retries),
			fetch.WithMaxDownloadSize(int(f.maxSize())),
			fetch.WithUntar(tar.WithMaxUntarSize(int(f.maxExtractedSize()))),
			fetch.WithHostnameOverwrite(f.HostOverride),
			fetch.WithLogger(f.Logger),
		)
	})
	return f.initErr
}

func (f *Fetcher) maxSize() int64 { return orDefault(f.MaxSize, DefaultMaxArtifactSize) }

func (f *Fetcher) maxExtractedSize() int64 {
	return orDefault(f.MaxExtractedSize, DefaultMaxExtractedSize)
}

func (f *Fetcher) maxCacheSize() int64 { return orDefault(f.MaxCacheSize, DefaultMaxCacheSize) }

// reservation is the room a download may take: the archive, then the
// files extracted from it, both on disk at once.
func (f *Fetcher) reservation() int64 { return f.maxSize() + f.maxExtractedSize() }

func orDefault(v, def int64) int64 {
	if v <= 0 {
		return def
	}
	return v
}

// download fetches, verifies and extracts into a temporary directory, and
// moves the result into the cache only when all of that succeeded.
func (f *Fetcher) download(ctx context.Context, a *meta.Artifact, key string) error {
	if f.disk.contains(key) {
		return nil // a concurrent download of the same artifact finished just before
	}
	// The announced size is checked first to spare the download; the
	// fetcher's own limit catches a server that sends more.
	if a.Size != nil && *a.Size > f.maxSize() {
		return fmt.Errorf("artifact %s: %d bytes, over the limit of %d bytes", a.URL, *a.Size, f.maxSize())
	}
	n := f.reservation()
	if err := f.disk.reserve(n); err != nil {
		return fmt.Errorf("artifact %s: %w", a.URL, err)
	}
	committed := false
	defer func() {
		if !committed {
			f.disk.cancel(n)
		}
	}()
	tmp, err := f.disk.tempDir()
	if err != nil {
		return fmt.Errorf("artifact %s: %w", a.URL, err)
	}
	defer os.RemoveAll(tmp) // nothing left to remove once committed
	if err := f.archive.FetchWithContext(ctx, a.URL, a.Digest, tmp); err != nil {
		return fmt.Errorf("artifact %s: %w", a.URL, err)
	}
	committed = true // commit takes the reservation back, whatever it returns
	if err := f.disk.commit(key, tmp, n); err != nil {
		return fmt.Errorf("artifact %s: %w", a.URL, err)
	}
	return nil
}
