package benchkit

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// BuildController compiles ./cmd/claimwarden from the module root into
// dir, so the run measures the source it is run from, with the version
// stamp the Makefile's build target gives it (git describe, else "dev").
func BuildController(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "claimwarden")
	version := "dev"
	describe := exec.CommandContext(ctx, "git", "describe", "--tags", "--always", "--dirty")
	describe.Dir = root
	if out, err := describe.Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		version = strings.TrimSpace(string(out))
	}
	cmd := exec.CommandContext(ctx, "go", "build",
		"-ldflags", "-X github.com/claimwarden/claimwarden/cmd/claimwarden/app.Version="+version,
		"-o", bin, "./cmd/claimwarden")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/claimwarden: %w\n%s", err, out)
	}
	return bin, nil
}
