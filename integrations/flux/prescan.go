package flux

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/kustomize/api/konfig"
)

// prescan charges what fluxcd/pkg/kustomize's generator parses, before it
// parses it with no limit of its own: the kustomization file of dir, or,
// without one, every YAML file under dir it would list as a resource
// (subdirectories with a kustomization file are listed unread).
func prescan(root, dir string, l Limits) error {
	b := newBudget(l)
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && !info.IsDir() {
			_, err := readBounded(root, p, b)
			return err
		}
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && hasKustomization(p) {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(p); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		_, err = readBounded(root, p, b)
		return err
	})
}

func hasKustomization(dir string) bool {
	return slices.ContainsFunc(konfig.RecognizedKustomizationFileNames(), func(name string) bool {
		info, err := os.Stat(filepath.Join(dir, name))
		return err == nil && !info.IsDir()
	})
}

// readBounded reads a regular file, at most the per-file limit of it, and
// charges it to b; errors name it relative to root.
func readBounded(root, path string, b *budget) ([]byte, error) {
	name := path
	if r, err := filepath.Rel(root, path); err == nil && filepath.IsLocal(r) {
		name = filepath.ToSlash(r)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readLimited(f, name, b.limits.FileBytes)
	if err != nil {
		return nil, err
	}
	if err := b.spend(name, data); err != nil {
		return nil, err
	}
	return data, nil
}

// readLimited reads f, which must be a regular file of at most limit bytes,
// and never more than that of it (a file can grow after its Stat).
func readLimited(f interface {
	io.Reader
	Stat() (fs.FileInfo, error)
}, name string, limit int64) ([]byte, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, over the limit of %d bytes per file", name, info.Size(), limit)
	}
	return io.ReadAll(io.LimitReader(f, limit+1))
}
