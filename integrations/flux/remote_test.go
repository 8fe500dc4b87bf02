package flux

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/claimwarden/claimwarden/reconciler/proposal"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// remoteTraps are the hosts a build must never reach: an HTTP server and a
// plain TCP listener (what git would dial for https://, ssh:// and git@
// references) count what arrives, and a git on PATH that records being run.
type remoteTraps struct {
	http      *httptest.Server
	requests  atomic.Int64
	tcpAddr   string
	dials     atomic.Int64
	gitMarker string
}

func newRemoteTraps(t *testing.T) *remoteTraps {
	r := &remoteTraps{}
	r.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		r.requests.Add(1)
		_, _ = w.Write([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fetched\n"))
	}))
	t.Cleanup(r.http.Close)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	r.tcpAddr = l.Addr().String()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r.dials.Add(1)
			_ = c.Close()
		}
	}()

	bin := t.TempDir()
	r.gitMarker = filepath.Join(t.TempDir(), "git-ran")
	script := "#!/bin/sh\necho \"$@\" >> " + r.gitMarker + "\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	return r
}

// assertUntouched fails unless nothing reached any trap.
func (r *remoteTraps) assertUntouched(t *testing.T) {
	t.Helper()
	if n := r.requests.Load(); n != 0 {
		t.Errorf("the build sent %d HTTP requests", n)
	}
	if n := r.dials.Load(); n != 0 {
		t.Errorf("the build opened %d TCP connections", n)
	}
	if ran, err := os.ReadFile(r.gitMarker); err == nil {
		t.Errorf("the build ran git: %s", ran)
	}
}

// remoteCases are kustomization.yaml files that each name one remote
// reference, in every field kustomize loads from; %H is the HTTP trap's
// URL and %T the TCP trap's host:port.
var remoteCases = []struct{ name, kustomization, ref string }{
	{"http resource", "resources:\n- %H/cm.yaml\n", "%H/cm.yaml"},
	{"git https base", "resources:\n- https://%T/repo.git//path?ref=x\n", "https://%T/repo.git//path?ref=x"},
	{"git ssh base", "resources:\n- ssh://git@%T/repo.git//path\n", "ssh://git@%T/repo.git//path"},
	{"git scp base", "resources:\n- git@%T:org/repo//path\n", "git@%T:org/repo//path"},
	{"github shorthand", "resources:\n- github.com/org/repo//path?ref=v1\n", "github.com/org/repo//path?ref=v1"},
	{"forced git", "resources:\n- git::https://%T/org/repo\n", "git::https://%T/org/repo"},
	{"deprecated bases", "bases:\n- https://%T/repo.git//path\n", "https://%T/repo.git//path"},
	{"component", "resources:\n- sts.yaml\ncomponents:\n- https://%T/repo.git//comp\n", "https://%T/repo.git//comp"},
	{"patch path", "resources:\n- sts.yaml\npatches:\n- path: %H/patch.yaml\n", "%H/patch.yaml"},
	{"json6902 path", "resources:\n- sts.yaml\npatchesJson6902:\n- path: %H/p.json\n  target: {kind: StatefulSet, name: db}\n", "%H/p.json"},
	{"strategic merge path", "resources:\n- sts.yaml\npatchesStrategicMerge:\n- %H/psm.yaml\n", "%H/psm.yaml"},
	{"openapi", "resources:\n- sts.yaml\nopenapi:\n  path: %H/schema.json\n", "%H/schema.json"},
	{"configurations", "resources:\n- sts.yaml\nconfigurations:\n- %H/config.yaml\n", "%H/config.yaml"},
	{"crds", "resources:\n- sts.yaml\ncrds:\n- %H/crd.json\n", "%H/crd.json"},
	{"replacement path", "resources:\n- sts.yaml\nreplacements:\n- path: %H/r.yaml\n", "%H/r.yaml"},
	{"configMapGenerator file", "configMapGenerator:\n- name: c\n  files:\n  - key=%H/f.txt\n", "%H/f.txt"},
	{"secretGenerator env", "secretGenerator:\n- name: s\n  envs:\n  - %H/s.env\n", "%H/s.env"},
	{"generator directory", "generators:\n- https://%T/repo.git//gen\n", "https://%T/repo.git//gen"},
	{"inline transformer", "resources:\n- sts.yaml\ntransformers:\n- |\n  apiVersion: builtin\n  kind: PatchTransformer\n  metadata: {name: p}\n  path: %H/patch.yaml\n", "%H/patch.yaml"},
	{"transformer file", "resources:\n- sts.yaml\ntransformers:\n- patcher.yaml\n", "%H/patch.yaml"},
	{"generator file", "generators:\n- gen.yaml\n", "%H/gen.txt"},
	{"token in the URL", "resources:\n- https://x-access-token:SECRET@%T/repo.git//path\n", "https://x-access-token:SECRET@%T/repo.git//path"},
}

const remoteSTS = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\nspec:\n  replicas: 1\n"

// remoteRepo writes a repository whose apps/kustomization.yaml is k, with
// the traps' addresses filled in, and returns its root.
func remoteRepo(t *testing.T, traps *remoteTraps, k string) string {
	t.Helper()
	fill := strings.NewReplacer("%H", traps.http.URL, "%T", traps.tcpAddr)
	root := t.TempDir()
	files := map[string]string{
		"apps/kustomization.yaml": fill.Replace(k),
		"apps/sts.yaml":           remoteSTS,
		"apps/patcher.yaml":       fill.Replace("apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\npath: %H/patch.yaml\n"),
		"apps/gen.yaml":           fill.Replace("apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: g\nfiles:\n- %H/gen.txt\n"),
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestBuildRefusesRemoteReferences(t *testing.T) {
	for _, c := range remoteCases {
		t.Run(c.name, func(t *testing.T) {
			traps := newRemoteTraps(t)
			root := remoteRepo(t, traps, c.kustomization)
			ref := strings.NewReplacer("%H", traps.http.URL, "%T", traps.tcpAddr).Replace(c.ref)

			_, err := Build(context.Background(), filepath.Join(root, "apps"), BuildOptions{})
			traps.assertUntouched(t)
			if err == nil {
				t.Fatal("the build succeeded")
			}
			// Named without user information, which may be a token.
			for _, want := range []string{"remote", proposal.RedactURL(ref)} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error %q shows the credential", err)
			}
			if !strings.Contains(err.Error(), "kustomization.yaml") && !strings.Contains(err.Error(), ".yaml") {
				t.Errorf("error %q names no file", err)
			}
		})
	}
}

// TestBuildRefusesRemoteComponentsOfTheKustomization: spec.components of a
// Flux Kustomization go into the generated kustomization.yaml.
func TestBuildRefusesRemoteComponentsOfTheKustomization(t *testing.T) {
	traps := newRemoteTraps(t)
	root := remoteRepo(t, traps, "resources:\n- sts.yaml\n")
	ref := "https://" + traps.tcpAddr + "/repo.git//comp"
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "apps"},
		Spec:       kustomizev1.KustomizationSpec{Path: "./apps", Components: []string{ref}},
	}
	_, err := Build(context.Background(), root, BuildOptions{Kustomization: ks})
	traps.assertUntouched(t)
	if err == nil || !strings.Contains(err.Error(), ref) || !strings.Contains(err.Error(), "flux-system/apps") {
		t.Fatalf("error %v, want one naming the Kustomization and %s", err, ref)
	}
}

// TestBuilderRefusesRemoteReferences: the controller's path, from a
// source-controller artifact: the Builder fails naming the Kustomization,
// the file and the reference, and nothing is fetched but the artifact.
func TestBuilderRefusesRemoteReferences(t *testing.T) {
	traps := newRemoteTraps(t)
	srv := newArtifactServer(t)
	root := remoteRepo(t, traps, "resources:\n- sts.yaml\n- https://"+traps.tcpAddr+"/repo.git//path?ref=x\n- "+traps.http.URL+"/cm.yaml\n")
	a := srv.serveDir(t, "/gitrepository/flux-system/repo/1.tar.gz", root)
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Namespace: "flux-system", Name: "apps", UID: "u", Generation: 1},
		Spec:       kustomizev1.KustomizationSpec{Path: "./apps"},
	}
	_, err := (&Builder{Fetcher: &Fetcher{Dir: t.TempDir()}}).Build(context.Background(), ks, a)
	traps.assertUntouched(t)
	want := `Kustomization flux-system/apps: apps/kustomization.yaml: resources: remote reference "https://` + traps.tcpAddr + `/repo.git//path?ref=x" refused`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
}
