package install

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/test/controllerproc"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// registry starts test/release's registry on a free loopback port.
func registry(t *testing.T) string {
	t.Helper()
	ports, err := testenv.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := loopback(ports[0])
	p, err := testenv.StartProcess(testenv.ProcessOptions{Name: "registry", Binary: tool(t, "release"),
		Args: []string{"registry", "-address", addr}, Log: filepath.Join(t.TempDir(), "registry.log")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(5 * time.Second) })
	waitHTTP(t, "http://"+addr+"/v2/")
	return addr
}

// `make release`'s script on an image of bin/claimwarden, pushing to a local
// registry: install.yaml and the chart pin the image by digest, the chart is
// served by the registry, checksums.txt verifies every artifact.
func TestReleaseScript(t *testing.T) {
	root := repoRoot(t)
	bin, err := controllerproc.BinaryPath()
	if err != nil {
		t.Fatal(err)
	}
	dist := t.TempDir()
	rel := tool(t, "release")
	digest := strings.TrimSpace(string(run(t, rel, "image", "-binaries", "linux/"+runtime.GOARCH+"="+bin, "-version", "v0.9.0",
		"-cacerts", filepath.Join(tool(t, "ca-certificates"), "ca-certificates.crt"), "-out", filepath.Join(dist, "image"))))
	if err := os.WriteFile(filepath.Join(dist, "image.digest"), []byte(digest+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, rel, "sbom", "-binary", bin, "-version", "v0.9.0", "-out", filepath.Join(dist, "claimwarden-linux-"+runtime.GOARCH+".spdx.json"))
	run(t, "tar", "-C", filepath.Join(dist, "image"), "-cf", filepath.Join(dist, "claimwarden-image.oci.tar"), ".")
	// `make image` leaves the binaries under dist/bin/<os>-<arch>/.
	if err := os.MkdirAll(filepath.Join(dist, "bin", "linux-"+runtime.GOARCH), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "cp", bin, filepath.Join(dist, "bin", "linux-"+runtime.GOARCH, "claimwarden"))

	reg := registry(t)
	repo := reg + "/claimwarden"
	run(t, rel, "push", "-layout", filepath.Join(dist, "image"), "-to", repo+":v0.9.0", "-insecure")
	cmd := exec.Command("bash", filepath.Join(root, "test/release/release.sh"))
	cmd.Env = append(os.Environ(), "VERSION=v0.9.0", "IMAGE_REPO="+repo, "DIST="+dist, "REGISTRY="+reg, "INSECURE=1", "COSIGN_KEY=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, out)
	}

	pinned := repo + "@" + digest
	install, err := os.ReadFile(filepath.Join(dist, "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(install), "image: "+pinned) {
		t.Errorf("install.yaml does not run %s", pinned)
	}
	if err := validate(t, install); err != nil {
		t.Error(err)
	}
	chart, err := runErr(tool(t, "helm"), "template", release, "oci://"+reg+"/charts/claimwarden", "--version", "0.9.0", "--plain-http",
		"-n", namespace, "--kube-version", kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(chart), "image: "+pinned) || !strings.Contains(string(chart), `app.kubernetes.io/version: "v0.9.0"`) {
		t.Errorf("the chart pulled from the registry does not pin %s at v0.9.0", pinned)
	}
	verifyChecksums(t, dist)
	if sums, err := os.ReadFile(filepath.Join(dist, "checksums.txt")); err != nil || !strings.Contains(string(sums), "  claimwarden-linux-"+runtime.GOARCH+"\n") {
		t.Errorf("checksums.txt does not list claimwarden-linux-%s, the binary ci/check.sh downloads (%v):\n%s", runtime.GOARCH, err, sums)
	}

	cmd = exec.CommandContext(context.Background(), "bash", filepath.Join(root, "test/release/release.sh"))
	cmd.Env = append(os.Environ(), "VERSION=0.9", "IMAGE_REPO="+repo, "DIST="+dist)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "VERSION=0.9 is not a semantic version") {
		t.Errorf("release.sh VERSION=0.9: %v\n%s", err, out)
	}
}

func verifyChecksums(t *testing.T, dist string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		sum, name, _ := strings.Cut(sc.Text(), "  ")
		data, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(data); hex.EncodeToString(h[:]) != sum {
			t.Errorf("checksums.txt: %s does not match", name)
		}
	}
	if n != 5 { // install.yaml, the chart, the binary, one SBOM, the image tar
		t.Errorf("checksums.txt lists %d files, want 5", n)
	}
}
