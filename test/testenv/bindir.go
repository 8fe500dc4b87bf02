package testenv

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const (
	// module is the path of the repository's module; RepoRoot looks for its go.mod.
	module = "github.com/claimwarden/claimwarden"
	// BinDirEnv overrides where the binaries are looked for (e.g. a binary directory built elsewhere).
	BinDirEnv = "TESTENV_BIN_DIR"
	// stagesFile holds the kwok stages that make Nodes Ready (with a Lease) and Pods Ready.
	stagesFile = "kwok-stages.yaml"
)

// BinDir returns the directory holding the control-plane binaries: $TESTENV_BIN_DIR
// when set, otherwise <RepoRoot>/bin/testenv.
func BinDir() (string, error) {
	if dir := os.Getenv(BinDirEnv); dir != "" {
		return filepath.Abs(dir)
	}
	root, err := RepoRoot()
	if err != nil {
		return "", fmt.Errorf("testenv: %w; set %s to the directory built by `make testenv`", err, BinDirEnv)
	}
	return filepath.Join(root, "bin", "testenv"), nil
}

// RepoRoot returns the repository's root: the nearest parent of the working
// directory whose go.mod declares this module. Tests run in their package's
// directory and the tools (`go run ./test/...`) wherever they are started, so
// walking up finds the root from anywhere in the checkout.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if isModuleRoot(dir) {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no go.mod of %s above %s", module, wd)
		}
	}
}

// isModuleRoot reports whether dir/go.mod declares this module (a nested module such
// as test/testenv/tools/* must not be mistaken for the root).
func isModuleRoot(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == module
		}
	}
	return false
}

// checkBinaries fails with one message naming every missing file, so a fresh clone
// gets "run `make testenv`" instead of a confusing exec error.
func checkBinaries(dir string, names ...string) error {
	var missing []string
	for _, name := range names {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return errors.New("testenv: missing " + strings.Join(missing, ", ") + " in " + dir + ": run `make testenv` (or set " + BinDirEnv + ")")
}
