package flux

import (
	"path/filepath"
	"slices"
	"sync"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// guardedFS is the file system kustomize builds from. kustomize reads every
// file through ReadFile (its loader offers no hook for the HTTP client or
// the git cloner it uses for remote references), so ReadFile is where a
// kustomization file naming a remote reference is refused, before
// kustomize sees the reference, and where what the build reads is charged
// to its budget (limits.go), before kustomize parses it.
type guardedFS struct {
	filesys.FileSystem
	root        string
	allowRemote bool
	rf          *resource.Factory
	budget      *budget

	mu      sync.Mutex
	refusal error
}

func newGuardedFS(fsys filesys.FileSystem, root string, allowRemote bool, l Limits) *guardedFS {
	return &guardedFS{
		FileSystem:  fsys,
		root:        root,
		allowRemote: allowRemote,
		rf:          provider.NewDefaultDepProvider().GetResourceFactory(),
		budget:      newBudget(l),
	}
}

// ReadFile returns the file's content unless the build must not use it.
func (g *guardedFS) ReadFile(path string) ([]byte, error) {
	data, err := g.read(path)
	if err != nil {
		return nil, err
	}
	if err := g.check(path, data); err != nil {
		return nil, g.refuse(err)
	}
	return data, nil
}

// read reads a regular file of at most the per-file limit, and no more of
// it than that.
func (g *guardedFS) read(path string) ([]byte, error) {
	if g.FileSystem.IsDir(path) {
		// kustomize tries a resource as a file first, then as a directory.
		return g.FileSystem.ReadFile(path)
	}
	f, err := g.FileSystem.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readLimited(f, g.rel(path), g.budget.limits.FileBytes)
	if err != nil {
		return nil, g.refuse(err)
	}
	return data, nil
}

func (g *guardedFS) check(path string, data []byte) error {
	name := g.rel(path)
	g.mu.Lock()
	err := g.budget.spend(name, data)
	g.mu.Unlock()
	if err != nil || g.allowRemote {
		return err
	}
	if slices.Contains(konfig.RecognizedKustomizationFileNames(), filepath.Base(path)) {
		return checkKustomizationRefs(g.rf, name, data)
	}
	return checkPluginRefs(g.rf, name, data)
}

// refuse records the first refusal: kustomize does not always pass a read
// error on (it takes one for a missing kustomization file and looks further).
func (g *guardedFS) refuse(err error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.refusal == nil {
		g.refusal = err
	}
	return err
}

// refused is the first refusal, which a failed build reports instead of
// whatever kustomize made of it.
func (g *guardedFS) refused() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refusal
}

// rel names path relative to the artifact root, as the repository spells it.
func (g *guardedFS) rel(path string) string {
	if r, err := filepath.Rel(g.root, path); err == nil && filepath.IsLocal(r) {
		return filepath.ToSlash(r)
	}
	return path
}
