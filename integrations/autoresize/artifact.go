package autoresize

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/integrations/gitedit"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
)

// Artifacts downloads source-controller's artifacts, extracted within
// bounds (flux.Fetcher).
type Artifacts interface {
	Acquire(ctx context.Context, a *meta.Artifact) (dir string, release func(), err error)
}

// chartArtifact reads the chart of the HelmChart key from its artifact
// (a chart from a Helm repository); release frees the artifact's
// directory.
func (j *job) chartArtifact(ctx context.Context, key types.NamespacedName) (Files, func(), error) {
	if j.c.Artifacts == nil {
		return nil, nil, errors.New("the chart is from a Helm repository and Flux's artifact cache is off (flux.enabled): it cannot be read")
	}
	var hc sourcev1.HelmChart
	if err := j.c.Reader.Get(ctx, key, &hc); err != nil {
		return nil, nil, fmt.Errorf("reading HelmChart %s: %w", key, err)
	}
	dir, release, err := j.c.Artifacts.Acquire(ctx, hc.Status.Artifact)
	if err != nil {
		return nil, nil, fmt.Errorf("the artifact of HelmChart %s: %w", key, err)
	}
	return dirFiles{root: dir}, release, nil
}

// dirFiles reads an extracted artifact. Reads go through os.Root: a
// symbolic link in a crafted chart cannot lead out of the artifact.
type dirFiles struct{ root string }

func (d dirFiles) File(_ context.Context, p string) ([]byte, error) {
	r, err := os.OpenRoot(d.root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	info, err := r.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", p, pullrequest.ErrNotFound)
	case err != nil:
		return nil, err
	case info.Size() > gitedit.MaxFileBytes:
		return nil, fmt.Errorf("%s: %d bytes, more than %d: %w", p, info.Size(), gitedit.MaxFileBytes, pullrequest.ErrTooLarge)
	}
	return r.ReadFile(p)
}

// Files are the regular files under dir, at most pullrequest.MaxFiles.
func (d dirFiles) Files(_ context.Context, dir string) ([]string, error) {
	r, err := os.OpenRoot(d.root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []string
	err = fs.WalkDir(r.FS(), path.Clean("./"+dir), func(p string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case e.Type().IsRegular():
			if out = append(out, p); len(out) > pullrequest.MaxFiles {
				return fmt.Errorf("more than %d files under %q: %w", pullrequest.MaxFiles, dir, pullrequest.ErrTooLarge)
			}
		}
		return nil
	})
	return out, err
}
