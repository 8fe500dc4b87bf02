package install

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/claimwarden/claimwarden/test/controllerproc"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// podmanRun are the flags every container gets: runc (crun fails in the
// VMs this runs on) and explicit limits (podman's defaults exceed them).
var podmanRun = []string{"run", "--runtime", "runc", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"}

func podman(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("podman")
	if err != nil {
		t.Fatal("podman is not installed: `make testenv` installs it (Debian's podman and runc)")
	}
	return p
}

// image builds the image of bin/claimwarden (`make build`: static, for this
// machine's platform, as `make image` builds each) and loads it into podman;
// it returns its ID.
func image(t *testing.T) string {
	t.Helper()
	bin, err := controllerproc.BinaryPath()
	if err != nil {
		t.Fatal(err)
	}
	// podman names the image after the directory, which must be lower case.
	tmp, err := os.MkdirTemp("", "claimwarden-image-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	dir := filepath.Join(tmp, "image")
	run(t, tool(t, "release"), "image", "-binaries", "linux/"+runtime.GOARCH+"="+bin, "-version", "test",
		"-cacerts", filepath.Join(tool(t, "ca-certificates"), "ca-certificates.crt"), "-out", dir)
	out := run(t, podman(t), "pull", "-q", "oci:"+dir)
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() { _, _ = runErr(podman(t), "rmi", "-f", id) })
	return id
}

// The image runs as the chart's Deployment runs it — nonroot, read-only
// root filesystem, no capabilities, the ServiceAccount token and CA where a
// Pod has them (in-cluster configuration), the chart's config mounted, /tmp
// a tmpfs — takes the leader Lease, serves /readyz and metrics, completes a
// rollout; and `check` evaluates the shipped policies in it.
func TestImageRunsAsDeployed(t *testing.T) {
	img := image(t)

	out, err := runErr(podman(t), append(podmanRun, "--rm", img, "version")...)
	if err != nil || !strings.HasPrefix(string(out), "claimwarden ") {
		t.Fatalf("claimwarden version in the image: %q, %v", out, err)
	}
	if _, err := runErr(podman(t), append(podmanRun, "--rm", "--entrypoint", "/bin/sh", img, "-c", "true")...); err == nil {
		t.Error("the image has a shell")
	}

	checkShippedPolicies(t, img)

	c := newCluster(t)
	ctx := context.Background()
	if err := fixtures.Namespace(ctx, c.admin, namespace); err != nil {
		t.Fatal(err)
	}
	helm(t, c, "install", release, chartDir(t), "--set", "image.tag=test")
	d := c.deployed(t, "claimwarden-config", "claimwarden")

	// The files a Pod of the Deployment gets, readable by its user.
	pod := t.TempDir()
	sa, cfg := filepath.Join(pod, "serviceaccount"), filepath.Join(pod, "config")
	for dir, files := range map[string]map[string]string{
		sa:  {"token": d.sa.BearerToken, "ca.crt": string(c.env.Config.CAData), "namespace": namespace},
		cfg: {"config.yaml": d.config},
	} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Chmod(pod, 0o755); err != nil {
		t.Fatal(err)
	}
	api, err := url.Parse(c.env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	ports, err := testenv.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	metrics, health := loopback(ports[0]), loopback(ports[1])
	name := fmt.Sprintf("claimwarden-test-%d", os.Getpid())
	args := append(podmanRun, "-d", "--name", name, "--network", "host",
		"--read-only", "--user", "65532:65532", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
		"--tmpfs", "/tmp:rw,size=64m",
		"-v", sa+":/var/run/secrets/kubernetes.io/serviceaccount:ro", "-v", cfg+":/etc/claimwarden:ro",
		"-e", "KUBERNETES_SERVICE_HOST="+api.Hostname(), "-e", "KUBERNETES_SERVICE_PORT="+api.Port(),
		img, "run", "--config=/etc/claimwarden/config.yaml", "--metrics-addr", metrics, "--health-addr", health)
	run(t, podman(t), args...)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := runErr(podman(t), "logs", "--tail", "40", name)
			t.Logf("container log:\n%s", logs)
		}
		_, _ = runErr(podman(t), "rm", "-f", "-t", "10", name)
	})

	waitHTTP(t, "http://"+health+"/readyz")
	c.leads(t)
	c.rollout(t, "shop")
	serves(t, metrics)
}

// checkShippedPolicies runs `claimwarden check` in the image on a 1Gi → 40Gi
// change: the policies built into the binary deny it (max-step).
func checkShippedPolicies(t *testing.T, img string) {
	t.Helper()
	sts, err := os.ReadFile(filepath.Join(repoRoot(t), "config/samples/statefulset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	for dir, content := range map[string]string{"base": string(sts), "head": strings.Replace(string(sts), "storage: 1Gi", "storage: 40Gi", 1)} {
		if err := os.MkdirAll(filepath.Join(work, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, dir, "statefulset.yaml"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := runErr(podman(t), append(podmanRun, "--rm", "--read-only", "--user", "65532:65532", "-v", work+":/work:ro",
		img, "check", "-f", "/work/head", "--base", "/work/base")...)
	if err == nil || !strings.Contains(string(out), "max-step: claim www-web-0") {
		t.Errorf("check in the image on +3900%%: %v\n%s, want max-step's denial", err, out)
	}
}

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

func waitHTTP(t *testing.T, u string) {
	t.Helper()
	hc := &http.Client{Timeout: time.Second}
	ok := testenv.HTTPOK(hc, u)
	err := wait.PollUntilContextTimeout(context.Background(), fixtures.Poll, time.Minute, true, func(ctx context.Context) (bool, error) {
		return ok(ctx) == nil, nil // refused: not listening yet
	})
	if err != nil {
		t.Fatalf("%s never answered 200: %v", u, err)
	}
}
