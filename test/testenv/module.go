package testenv

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// ModuleFile is the path of file in Go module mod, at the version this
// module's go.mod requires, in the module cache: CRDs a test installs from
// the module that defines them (the build of the test has downloaded it).
func ModuleFile(mod, file string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", mod).Output()
	if err != nil {
		return "", fmt.Errorf("finding module %s: %w", mod, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("module %s is not in the module cache", mod)
	}
	return filepath.Join(dir, filepath.FromSlash(file)), nil
}
