package flux

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Entry names under a cache directory: extracted artifacts are named by their
// digest's hex; downloads in progress and doomed directories carry a prefix
// so that a restart can tell them apart and clear them.
const (
	tmpPrefix   = ".tmp-"
	trashPrefix = ".trash-"
)

var digestHexName = regexp.MustCompile(`^[a-f0-9]+$`)

// diskCache keeps the last few extracted artifacts on disk, least recently
// used first out, in at most maxBytes: a download reserves its worst case
// (reserve) before it writes anything, evicting what it must. An artifact in
// use by a build is never removed under it: evicted while in use, it is
// retired and removed at its last release (and revived if asked for again
// before that).
type diskCache struct {
	dir      string
	maxBytes int64

	// space serialises reservations, so that two downloads do not evict
	// for each other's room.
	space sync.Mutex

	mu       sync.Mutex
	live     *simplelru.LRU[string, *cachedDir]
	retired  map[string]*cachedDir
	doomed   []doomedDir // renamed out of the way under mu, removed outside it
	used     int64       // bytes of live, retired and doomed directories
	reserved int64       // bytes reserved by downloads in progress
}

type cachedDir struct {
	key  string
	refs int
	size int64
}

type doomedDir struct {
	path string
	size int64
}

// openDiskCache prepares dir, clears what an earlier process left half done
// and adopts the artifacts it completed (an artifact is renamed into place
// only once fully extracted and verified), oldest first.
func openDiskCache(dir string, keep int, maxBytes int64) (*diskCache, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("artifact cache %s: %w", dir, err)
	}
	c := &diskCache{dir: dir, maxBytes: maxBytes, retired: map[string]*cachedDir{}}
	live, err := simplelru.NewLRU(keep, c.evicted)
	if err != nil {
		return nil, fmt.Errorf("artifact cache %s: %w", dir, err)
	}
	c.live = live

	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("artifact cache %s: %w", dir, err)
	}
	type found struct {
		name string
		mod  time.Time
	}
	var adopt []found
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, tmpPrefix), strings.HasPrefix(name, trashPrefix):
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				return nil, fmt.Errorf("artifact cache: clearing %s: %w", name, err)
			}
		case e.IsDir() && digestHexName.MatchString(name):
			info, err := e.Info()
			if err != nil {
				return nil, fmt.Errorf("artifact cache: %w", err)
			}
			adopt = append(adopt, found{name, info.ModTime()})
		}
	}
	slices.SortFunc(adopt, func(a, b found) int { return a.mod.Compare(b.mod) })
	for _, f := range adopt {
		size, err := dirSize(c.path(f.name))
		if err != nil {
			return nil, fmt.Errorf("artifact cache: %w", err)
		}
		c.mu.Lock()
		c.live.Add(f.name, &cachedDir{key: f.name, size: size})
		c.used += size
		for c.used > c.maxBytes && c.evictOldestUnused() {
		}
		c.mu.Unlock()
		c.sweep()
	}
	return c, nil
}

// evicted is the LRU's eviction callback; it runs with mu held.
func (c *diskCache) evicted(key string, e *cachedDir) {
	if e.refs > 0 {
		c.retired[key] = e
		return
	}
	c.discard(e)
}

// discard renames the directory out of the way (so the name is free for a
// new download at once) and leaves the slow removal to sweep. mu is held.
func (c *diskCache) discard(e *cachedDir) {
	doomed := c.path(e.key)
	if trash, err := os.MkdirTemp(c.dir, trashPrefix); err == nil {
		if os.Rename(doomed, filepath.Join(trash, e.key)) == nil {
			doomed = trash
		} else {
			c.doomed = append(c.doomed, doomedDir{path: trash})
		}
	}
	c.doomed = append(c.doomed, doomedDir{path: doomed, size: e.size})
}

// sweep removes discarded directories; it is called without mu held. Their
// bytes count as used until they are gone.
func (c *diskCache) sweep() {
	c.mu.Lock()
	doomed := c.doomed
	c.doomed = nil
	c.mu.Unlock()
	for _, d := range doomed {
		_ = os.RemoveAll(d.path) // best effort: a leftover is cleared at the next start
		c.mu.Lock()
		c.used -= d.size
		c.mu.Unlock()
	}
}

// evictOldestUnused discards the least recently used artifact not in use
// and reports whether there was one. mu is held.
func (c *diskCache) evictOldestUnused() bool {
	for _, key := range c.live.Keys() {
		if e, _ := c.live.Peek(key); e.refs == 0 {
			c.live.Remove(key) // evicted discards it
			return true
		}
	}
	return false
}

// reserve makes room for a download of at most n bytes, evicting artifacts
// not in use, least recently used first, and removing them before it
// returns; the download commits or cancels the reservation.
func (c *diskCache) reserve(n int64) error {
	c.space.Lock()
	defer c.space.Unlock()
	for {
		c.mu.Lock()
		if c.used+c.reserved+n <= c.maxBytes {
			c.reserved += n
			c.mu.Unlock()
			return nil
		}
		evicted := c.evictOldestUnused()
		used, reserved := c.used, c.reserved
		c.mu.Unlock()
		if !evicted {
			return fmt.Errorf("artifact cache full: %d bytes held by artifacts in use and %d reserved by downloads in progress, "+
				"%d bytes needed, of at most %d (flux.maxCacheSize)", used, reserved, n, c.maxBytes)
		}
		c.sweep()
	}
}

// cancel returns a reservation a download did not use.
func (c *diskCache) cancel(n int64) {
	c.mu.Lock()
	c.reserved -= n
	c.mu.Unlock()
}

func (c *diskCache) path(key string) string { return filepath.Join(c.dir, key) }

// acquire returns the artifact's directory if it is cached, and a release
// that must be called once the caller no longer reads from it.
func (c *diskCache) acquire(key string) (string, func(), bool) {
	c.mu.Lock()
	e, ok := c.live.Get(key)
	if !ok {
		if e, ok = c.retired[key]; ok {
			delete(c.retired, key)
			c.live.Add(key, e)
		}
	}
	if ok {
		e.refs++
	}
	c.mu.Unlock()
	c.sweep()
	if !ok {
		return "", nil, false
	}
	var once sync.Once
	return c.path(key), func() { once.Do(func() { c.release(e) }) }, true
}

// contains reports whether the artifact is on disk, without using it.
func (c *diskCache) contains(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, retired := c.retired[key]
	return retired || c.live.Contains(key)
}

func (c *diskCache) release(e *cachedDir) {
	c.mu.Lock()
	e.refs--
	if e.refs == 0 && c.retired[e.key] == e {
		delete(c.retired, e.key)
		c.discard(e)
	}
	c.mu.Unlock()
	c.sweep()
}

// tempDir is where a download extracts before commit renames it into place.
func (c *diskCache) tempDir() (string, error) {
	return os.MkdirTemp(c.dir, tmpPrefix)
}

// commit moves a fully extracted and verified artifact into the cache, in
// place of the reservation of reserved bytes it was extracted under.
func (c *diskCache) commit(key, extracted string, reserved int64) error {
	size, err := dirSize(extracted)
	if err != nil {
		return fmt.Errorf("artifact cache: %w", err)
	}
	c.mu.Lock()
	defer func() {
		c.mu.Unlock()
		c.sweep()
	}()
	c.reserved -= reserved
	if c.live.Contains(key) {
		return os.RemoveAll(extracted)
	}
	if e, ok := c.retired[key]; ok {
		delete(c.retired, key)
		c.live.Add(key, e)
		return os.RemoveAll(extracted)
	}
	if err := os.Rename(extracted, c.path(key)); err != nil {
		return fmt.Errorf("artifact cache: %w", err)
	}
	c.live.Add(key, &cachedDir{key: key, size: size})
	c.used += size
	// Rounding to blocks can take an artifact past its reservation.
	for c.used+c.reserved > c.maxBytes && c.evictOldestUnused() {
	}
	return nil
}

// dirSize is what dir takes on disk, as onDisk counts it.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += onDisk(info)
		return nil
	})
	return n, err
}

// blockSize is the allocation unit assumed for every file and directory:
// an emptyDir's sizeLimit counts blocks, not bytes, and 4 KiB is the common
// block size of the file systems behind it.
const blockSize = 4 << 10

// onDisk is the space a file or directory of info's size takes, rounded up
// to whole blocks (at least one).
func onDisk(info fs.FileInfo) int64 {
	blocks := max(1, (info.Size()+blockSize-1)/blockSize)
	return blocks * blockSize
}
