package install

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimwarden/claimwarden/test/testenv"
)

const module = "github.com/claimwarden/claimwarden"

// TestGoInstall runs what docs/check.md tells CI users to run,
// `go install github.com/claimwarden/claimwarden/cmd/claimwarden@<version>`,
// with a fresh GOPATH and GOBIN, offline: the module itself comes from a proxy
// directory written from this checkout, its dependencies from the module
// cache's download directory (itself a valid GOPROXY). A replace directive in
// go.mod makes the go command refuse this. The checksum database is off: `go
// install pkg@version` asks it about every dependency (the module's go.sum
// is not consulted) and it is not reachable offline; the zips are those the
// go command verified against it when it downloaded them into the cache.
// CGO off and -trimpath as `make build`: the build cache (keyed by module
// path, not directory, with -trimpath) then holds every dependency already,
// and the go command resolves modules the same with any build flags.
func TestGoInstall(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	modcache := goEnv(t, "GOMODCACHE")
	const version = "v0.0.0-installtest"
	proxy := t.TempDir()
	writeModuleProxy(t, root, module, version, proxy)

	gopath, gobin := t.TempDir(), t.TempDir()
	cmd := exec.Command("go", "install", "-trimpath", module+"/cmd/claimwarden@"+version)
	cmd.Dir = t.TempDir() // outside any module, as a user runs it
	cmd.Env = append(os.Environ(),
		"GOPATH="+gopath, "GOMODCACHE="+filepath.Join(gopath, "pkg", "mod"), "GOBIN="+gobin,
		"GOPROXY=file://"+proxy+",file://"+filepath.Join(modcache, "cache", "download"),
		"GOSUMDB=off", "GOFLAGS=", "CGO_ENABLED=0")
	// The module cache's files are read-only: make them removable for t.TempDir.
	t.Cleanup(func() { makeWritable(gopath) })
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install %s/cmd/claimwarden@%s: %v\n%s", module, version, err, out)
	}

	out, err := exec.Command(filepath.Join(gobin, "claimwarden"), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("claimwarden version: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), "claimwarden "+version+" ") {
		t.Errorf("claimwarden version = %q, want the module version %s", out, version)
	}
}

func makeWritable(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}
