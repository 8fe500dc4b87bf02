package flux

import (
	"fmt"
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
// used first out. An artifact in use by a build is never removed under it:
// evicted while in use, it is retired and removed at its last release (and
// revived if asked for again before that).
type diskCache struct {
	dir string

	mu      sync.Mutex
	live    *simplelru.LRU[string, *cachedDir]
	retired map[string]*cachedDir
	doomed  []string // renamed out of the way under mu, removed outside it
}

type cachedDir struct {
	key  string
	refs int
}

// openDiskCache prepares dir, clears what an earlier process left half done
// and adopts the artifacts it completed (an artifact is renamed into place
// only once fully extracted and verified), oldest first.
func openDiskCache(dir string, keep int) (*diskCache, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("artifact cache %s: %w", dir, err)
	}
	c := &diskCache{dir: dir, retired: map[string]*cachedDir{}}
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
	c.mu.Lock()
	for _, f := range adopt {
		c.live.Add(f.name, &cachedDir{key: f.name})
	}
	c.mu.Unlock()
	c.sweep()
	return c, nil
}

// evicted is the LRU's eviction callback; it runs with mu held.
func (c *diskCache) evicted(key string, e *cachedDir) {
	if e.refs > 0 {
		c.retired[key] = e
		return
	}
	c.discard(key)
}

// discard renames the directory out of the way (so the name is free for a
// new download at once) and leaves the slow removal to sweep. mu is held.
func (c *diskCache) discard(key string) {
	doomed := c.path(key)
	if trash, err := os.MkdirTemp(c.dir, trashPrefix); err == nil {
		if os.Rename(doomed, filepath.Join(trash, key)) == nil {
			doomed = trash
		} else {
			c.doomed = append(c.doomed, trash)
		}
	}
	c.doomed = append(c.doomed, doomed)
}

// sweep removes discarded directories; it is called without mu held.
func (c *diskCache) sweep() {
	c.mu.Lock()
	doomed := c.doomed
	c.doomed = nil
	c.mu.Unlock()
	for _, d := range doomed {
		_ = os.RemoveAll(d) // best effort: a leftover is cleared at the next start
	}
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
		c.discard(e.key)
	}
	c.mu.Unlock()
	c.sweep()
}

// tempDir is where a download extracts before commit renames it into place.
func (c *diskCache) tempDir() (string, error) {
	return os.MkdirTemp(c.dir, tmpPrefix)
}

// commit moves a fully extracted and verified artifact into the cache.
func (c *diskCache) commit(key, extracted string) error {
	c.mu.Lock()
	defer func() {
		c.mu.Unlock()
		c.sweep()
	}()
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
	c.live.Add(key, &cachedDir{key: key})
	return nil
}
