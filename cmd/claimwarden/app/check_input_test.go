package app

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// storageClass lets the shipped expansion-allowed policy allow growth.
const storageClass = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\nprovisioner: csi.example.com\nallowVolumeExpansion: true\n"

// statefulSet is a StatefulSet shop/<name> with one template "data" of size;
// meta is added to its metadata (indented by two spaces), spec to its spec.
func statefulSet(name string, replicas int, size, meta, spec string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: %[1]s
  namespace: shop
%[4]sspec:
  replicas: %[2]d
  serviceName: %[1]s
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: db
        image: postgres:17
%[5]s  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: fast
      resources:
        requests:
          storage: %[3]s
`, name, replicas, size, meta, spec)
}

// files writes name → content into a new directory and returns its path.
func files(t *testing.T, content map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, c := range content {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// checkIn runs check in-process; it fails the test unless the exit code is
// code and the output says every part of want.
func checkIn(t *testing.T, code int, want []string, args ...string) string {
	t.Helper()
	got, out := runCheckCLI(t, nil, args...)
	if got != code {
		t.Errorf("exit code %d, want %d:\n%s", got, code, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	return out
}

// Item 4 of issue 12: a base without the StatefulSets (git show failed,
// wrong path) made every proposed StatefulSet "new" and passed.
func TestCheckRefusesABaseWithoutStatefulSets(t *testing.T) {
	pr := files(t, map[string]string{"web.yaml": statefulSet("web", 2, "40Gi", "", "")})
	base := files(t, map[string]string{"sc.yaml": storageClass})
	checkIn(t, 2, []string{"the base holds no StatefulSet", "--allow-new"}, "-f", pr, "--base", base)
	checkIn(t, 0, []string{`"name": "web"`, `"status": "new"`}, "-f", pr, "--base", base, "--allow-new", "-o", "json")

	// An empty stdin, as `git show` that failed writes, is an error even with --allow-new.
	cmd := exec.Command(os.Args[0], "check", "-f", pr, "--base", "-", "--allow-new")
	cmd.Env = []string{mainEnv + "=1"}
	cmd.Stdin = strings.NewReader("")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitCheckInput || !strings.Contains(stderr.String(), "stdin (--base -) is empty") {
		t.Errorf("check --base - with an empty stdin: %v\n%s\nwant exit code 2 saying stdin is empty", err, stderr.String())
	}
}

// Item 5 of issue 12: a StatefulSet in a List inside a List went unchecked.
func TestCheckNestedList(t *testing.T) {
	inner := strings.ReplaceAll(statefulSet("web", 2, "40Gi", "", ""), "\n", "\n    ")
	pr := files(t, map[string]string{"list.yaml": "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n  - " + strings.TrimSpace(inner) + "\n"})
	base := files(t, map[string]string{"web.yaml": statefulSet("web", 2, "10Gi", "", ""), "sc.yaml": storageClass})
	checkIn(t, 1, []string{"data-web-0  10Gi  40Gi  denied   max-step"}, "-f", pr, "--base", base)
}

// Item 9 of issue 12: input is bounded, with the limit named.
func TestCheckBoundsInput(t *testing.T) {
	big := files(t, map[string]string{"web.yaml": statefulSet("web", 2, "40Gi", "  annotations: {note: "+strings.Repeat("x", 2<<20)+"}\n", "")})
	base := files(t, map[string]string{"web.yaml": statefulSet("web", 2, "10Gi", "", ""), "sc.yaml": storageClass})
	checkIn(t, 2, []string{"web.yaml", "limit of 1Mi bytes"}, "-f", big, "--base", base, "--max-input-bytes", "1Mi")
	checkIn(t, 1, []string{"denied"}, "-f", big, "--base", base)

	dir := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.yaml")); err != nil {
		t.Fatal(err)
	}
	checkIn(t, 2, []string{"zero.yaml: not a regular file"}, "-f", dir, "--base", base)
}

// Item 11 of issue 12, on the terminal: messages naming what a pull
// request wrote (here a file name) cannot drive the terminal.
func TestCheckErrorsCannotDriveTheTerminal(t *testing.T) {
	pr := files(t, map[string]string{"web\x1b[2J\u202e.yaml": "kind: [\n"})
	base := files(t, map[string]string{"web.yaml": statefulSet("web", 2, "10Gi", "", ""), "sc.yaml": storageClass})
	out := checkIn(t, 2, []string{`web\x1b[2J\u202e.yaml`}, "-f", pr, "--base", base)
	if strings.ContainsAny(out, "\x1b\u202e") {
		t.Errorf("the message carries the escape sequence:\n%q", out)
	}
}

// Item 8 of issue 12, at pull-request time: a proposal asking for more
// claims than the controller's per-StatefulSet bound would stall its
// rollout once applied, so check refuses it; and the claim at the last
// int32 ordinal is compared, not skipped by an overflowing loop.
func TestCheckClaimBoundsAsTheController(t *testing.T) {
	base := files(t, map[string]string{"web.yaml": statefulSet("web", 2, "10Gi", "", ""), "sc.yaml": storageClass})
	pr := files(t, map[string]string{"web.yaml": statefulSet("web", 2147483647, "10Gi", "", "")})
	checkIn(t, 2, []string{"spec.replicas", "1000"}, "-f", pr, "--base", base)

	last := "  ordinals: {start: 2147483647}\n"
	base = files(t, map[string]string{"web.yaml": statefulSet("web", 1, "10Gi", "", last), "sc.yaml": storageClass})
	pr = files(t, map[string]string{"web.yaml": statefulSet("web", 1, "40Gi", "", last)})
	checkIn(t, 1, []string{"data-web-2147483647", "denied", "max-step"}, "-f", pr, "--base", base)
}
