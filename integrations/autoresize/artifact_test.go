package autoresize

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/claimwarden/claimwarden/integrations/gitedit"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
)

// An extracted artifact is read as a branch is: its regular files, each
// bounded; a symbolic link out of it is not followed.
func TestDirFiles(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	write := func(p, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "web/Chart.yaml"), "name: web\n")
	write(filepath.Join(root, "web/templates/sts.yaml"), "kind: StatefulSet\n")
	write(filepath.Join(root, "web/big.yaml"), strings.Repeat("x", gitedit.MaxFileBytes+1))
	write(filepath.Join(outside, "secret"), "token")
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "web/values.yaml")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d := dirFiles{root: root}
	files, err := d.Files(ctx, "web")
	if err != nil || !slices.Equal(files, []string{"web/Chart.yaml", "web/big.yaml", "web/templates/sts.yaml"}) {
		t.Errorf("Files = %v, %v; want the regular files", files, err)
	}
	if b, err := d.File(ctx, "web/Chart.yaml"); err != nil || string(b) != "name: web\n" {
		t.Errorf("File = %q, %v", b, err)
	}
	if _, err := d.File(ctx, "web/values.yaml"); err == nil {
		t.Error("a symbolic link out of the artifact was followed")
	}
	if _, err := d.File(ctx, "web/big.yaml"); !errors.Is(err, pullrequest.ErrTooLarge) {
		t.Errorf("a file over the bound: %v, want ErrTooLarge", err)
	}
	if _, err := d.File(ctx, "web/none.yaml"); !errors.Is(err, pullrequest.ErrNotFound) {
		t.Errorf("a missing file: %v, want ErrNotFound", err)
	}
}
