package controllerproc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// BuildAt returns the claimwarden binary of an earlier commit of this
// repository (the version an upgrade starts from), built from `git
// archive` of that commit in a temporary directory and cached under the
// test environment's cache as claimwarden-<commit>/claimwarden: later runs,
// in any checkout, reuse it. The commit's own go.mod decides the
// dependencies (fetched from the module proxy).
func BuildAt(ctx context.Context, commit string) (string, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return "", err
	}
	full, err := run(ctx, root, nil, "git", "rev-parse", "--verify", commit+"^{commit}")
	if err != nil {
		return "", err
	}
	cache, err := cacheDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(cache, "claimwarden-"+full, "claimwarden")
	if fi, err := os.Stat(bin); err == nil && !fi.IsDir() {
		return bin, nil
	}
	src, err := os.MkdirTemp("", "claimwarden-"+full[:12]+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(src)
	archive := filepath.Join(src, "source.tar")
	if _, err := run(ctx, root, nil, "git", "archive", "--format=tar", "-o", archive, full); err != nil {
		return "", err
	}
	if _, err := run(ctx, src, nil, "tar", "-xf", archive); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	// Built into a temporary name and renamed: a concurrent build or an
	// interrupted one never leaves a half-written binary under the cached name.
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	ldflags := "-s -w -X github.com/claimwarden/claimwarden/cmd/claimwarden/app.Version=" + full[:12]
	env := []string{"CGO_ENABLED=0", "GOFLAGS=-mod=mod"}
	if _, err := run(ctx, src, env, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", tmp, "./cmd/claimwarden"); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return bin, os.Rename(tmp, bin)
}

// cacheDir is build.sh's cache: $TESTENV_CACHE, else
// $XDG_CACHE_HOME/claimwarden/testenv, else ~/.cache/claimwarden/testenv.
func cacheDir() (string, error) {
	if d := os.Getenv("TESTENV_CACHE"); d != "" {
		return d, nil
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "claimwarden", "testenv"), nil
}

// run runs name in dir with env added, and returns its trimmed stdout; a
// failure carries stderr.
func run(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// FileAt returns the file at path (relative to the repository root) as of
// commit: e.g. the CRD an earlier release installed.
func FileAt(ctx context.Context, commit, path string) ([]byte, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "git", "show", commit+":"+path)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git show %s:%s: %v: %s", commit, path, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
