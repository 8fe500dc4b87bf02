package benchkit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// Workdir is a benchmark command's run directory: the logs of what runs
// in its process (controller-runtime's and klog's: the storage simulator),
// and the claimwarden binary it runs.
type Workdir struct {
	// Root is the repository's root.
	Root string
	Dir  string
	// Bin is the claimwarden binary.
	Bin  string
	logs *os.File
}

// NewWorkdir makes the run directory of command name
// (claimwarden-<name>-*), sends controller-runtime's and klog's logs to
// storagesim.log in it, and finds the binary: bin, or ./cmd/claimwarden
// built into the directory (say is told first). It must run from the
// repository. Close it when the run ends.
func NewWorkdir(ctx context.Context, name, bin string, say func(format string, args ...any)) (*Workdir, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, fmt.Errorf("%w: run from the repository", err)
	}
	w := &Workdir{Root: root, Bin: bin}
	if w.Dir, err = os.MkdirTemp("", "claimwarden-"+name+"-"); err != nil {
		return nil, err
	}
	if w.logs, err = os.Create(filepath.Join(w.Dir, "storagesim.log")); err != nil {
		w.Close(true)
		return nil, err
	}
	logger := zap.New(zap.WriteTo(w.logs))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	if w.Bin == "" {
		say("building ./cmd/claimwarden")
		if w.Bin, err = BuildController(ctx, root, w.Dir); err != nil {
			w.Close(true)
			return nil, err
		}
	}
	return w, nil
}

// Close closes the logs and removes the directory, unless the run failed
// or testenv.KeepEnv is set: then it says where the logs are kept.
func (w *Workdir) Close(failed bool) {
	if w.logs != nil {
		_ = w.logs.Close()
	}
	if failed || os.Getenv(testenv.KeepEnv) != "" {
		fmt.Printf("logs kept in %s\n", w.Dir)
		return
	}
	_ = os.RemoveAll(w.Dir)
}
