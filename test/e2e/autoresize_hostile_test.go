package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fluxenv"
	giteasrv "github.com/claimwarden/claimwarden/test/gitea"
	"github.com/claimwarden/claimwarden/test/promenv"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// The hostile charts' templates: each renders nothing while the size is
// the installed 1Gi, so Flux installs it, and turns hostile when rendered
// with a grown size, which only autoresize does.
const (
	hostileLoop   = `{{ if ne (toString .Values.size) "1Gi" }}{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}{{ end }}`
	hostileString = `{{ if ne (toString .Values.size) "1Gi" }}{{ $s := "xxxxxxxxxxxxxxxx" }}{{ range until 40 }}{{ $s = print $s $s }}{{ end }}{{ $s }}{{ end }}`
)

// neighbours is how many StatefulSets of other tenants are checked beside
// the hostile ones.
const neighbours = 20

// One tenant's chart must not stall or crash autoresize for the others
// (issue 39, classes 1 and 2): a template that loops, one that builds a
// string until memory runs out, and subcharts that unpack to more than the
// chart's budget, each in its own tenant's HelmRelease. Their renders are
// refused, naming the bound; no pull request is opened for them; the 20
// StatefulSets of another tenant are all checked meanwhile; the
// controller stays up and within the Deployment's 512Mi. A tenant's
// exporter forging a neighbour's claim as full (class 3) gets no
// decision and no pull request.
func TestAutoresizeHostileCharts(t *testing.T) {
	began := time.Now()
	cl := started(t)
	startFlux(t)
	g := startGitea(t)
	// A tenant's exporter, scraped with its labels honoured, forges the
	// kubelet's series of a neighbour's claim (issue 39, class 3).
	var forgedNamespace atomic.Pointer[string]
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if ns := forgedNamespace.Load(); ns != nil {
			fmt.Fprint(w, forgedSeries(*ns))
		}
	}))
	t.Cleanup(exporter.Close)
	prom := promenv.StartJobsT(t, time.Second, promenv.Job{Name: "kubelet", Targets: []string{cl.volumeStats}},
		promenv.Job{Name: "tenant-exporter", Targets: []string{strings.TrimPrefix(exporter.URL, "http://")}, HonorLabels: true})
	// Small bounds: a hostile render costs CI two seconds of CPU, not twenty.
	ctl := startController(t, cl, "autoresize-hostile", "--flux", "--flux-helm-releases", "--flux-artifact-cache-dir", t.TempDir(),
		"--autoresize-render-cpu=2s", "--autoresize-render-timeout=30s", "--autoresize-render-memory-bytes=67108864",
		"--config", autoresizeConfig(t, cl, g, prom.URL, "autoresize_horizon_seconds: 600"))
	sdk := giteaSDK(t, g)

	others := setupNeighbours(t, cl, g, ctl, "hostile-neighbours")
	hostile := map[string]struct {
		files map[string]string
		want  string
	}{
		"hostile-loop":    {map[string]string{"chart/templates/hostile.yaml": hostileLoop}, "used more than 2s of CPU time"},
		"hostile-string":  {map[string]string{"chart/templates/hostile.yaml": hostileString}, "needed more than 64 MiB of memory"},
		"hostile-archive": {bombSubcharts(t), "archives (subcharts) unpack to more than 32 MiB"},
	}
	sts := map[string]types.NamespacedName{}
	var mu sync.Mutex
	t.Run("setup", func(t *testing.T) {
		for name, h := range hostile {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				s, _ := setupHelmScenario(t, cl, g, ctl, name, h.files)
				mu.Lock()
				defer mu.Unlock()
				sts[name] = s.sts
			})
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	start := time.Now()
	// Forged from now on: the status it causes is written after start.
	// The neighbours stay empty (a jump in their usage would read as a
	// fast fill and grow them, rightly).
	forgedNamespace.Store(&others)
	for _, key := range sts {
		fill(t, cl.admin, key.Namespace, "900Mi", claimNames("web", 2)...)
	}

	for i := range neighbours {
		key := types.NamespacedName{Namespace: others, Name: fmt.Sprintf("web-%02d", i)}
		if i == 0 {
			// The forged 120% beside the kubelet's 10%: no decision, said.
			autoresizeStatus(t, cl.admin, key, start, "no decision on the forged claim", func(a *v1alpha1.AutoresizeStatus) bool {
				return strings.HasPrefix(a.Message, "no decision for data-web-00-0: 2 series of the selector report it")
			}, ctl)
			continue
		}
		// At rest, a status that says the same is not written again: it
		// may be older than start.
		autoresizeStatus(t, cl.admin, key, began, "checked", func(a *v1alpha1.AutoresizeStatus) bool {
			return a.Usage == fmt.Sprintf("0%% data-web-%02d-0", i) && strings.HasPrefix(a.Message, "no claim needs to grow")
		}, ctl)
	}
	t.Logf("the %d neighbours all checked, the forged claim undecided %s after the volumes filled", neighbours, time.Since(start).Round(time.Second))

	for name, key := range sts {
		st := autoresizeStatus(t, cl.admin, key, start, "the render refused", func(a *v1alpha1.AutoresizeStatus) bool {
			return strings.Contains(a.Message, hostile[name].want)
		}, ctl)
		t.Logf("%s: %s", name, st.Message)
	}
	t.Logf("the hostile charts all refused %s after the volumes filled", time.Since(start).Round(time.Second))
	for _, name := range append(slices.Sorted(maps.Keys(hostile)), "hostile-neighbours") {
		if prs, err := pullRequests(context.Background(), sdk, g.User, name); err != nil || len(prs) != 0 {
			t.Errorf("%s: %d pull requests (%v), want none", name, len(prs), err)
		}
	}
	if err := testenv.HTTPOK(http.DefaultClient, "http://"+ctl.HealthAddr+"/healthz")(context.Background()); err != nil {
		t.Errorf("liveness: %v", err)
	}
	if rss := peakRSS(t, ctl.Pid()); rss > 512<<20 {
		t.Errorf("the controller's peak RSS is %d MiB, over the Deployment's 512Mi", rss>>20)
	} else {
		t.Logf("the controller's peak RSS: %d MiB", rss>>20)
	}
}

// setupNeighbours creates a repository of neighbours StatefulSets of one
// replica (web-00…), applied by one Kustomization into a new namespace,
// waits until each is at rest and returns the namespace.
func setupNeighbours(t *testing.T, cl *cluster, g *giteasrv.Server, ctl *controller, name string) string {
	t.Helper()
	ctx := context.Background()
	url, err := g.CreateRepo(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	var resources []string
	for i := range neighbours {
		file := fmt.Sprintf("web-%02d.yaml", i)
		files[file] = strings.NewReplacer("name: web", fmt.Sprintf("name: web-%02d", i), "replicas: 2", "replicas: 1",
			"app: web", "app: web-"+strconv.Itoa(i)).Replace(fmt.Sprintf(fluxStatefulSet, "1Gi"))
		resources = append(resources, file)
	}
	files["kustomization.yaml"] = "resources: [" + strings.Join(resources, ", ") + "]\n"
	if _, err := g.PushCommit(ctx, name, files, "twenty neighbours"); err != nil {
		t.Fatal(err)
	}
	ns := namespace(t, cl.admin)
	if err := cl.admin.Create(ctx, fluxenv.GitRepository("flux-system", name, url, time.Minute)); err != nil {
		t.Fatal(err)
	}
	ks := fluxenv.Kustomization("flux-system", name, name, "./")
	ks.Spec.TargetNamespace = ns
	if err := cl.admin.Create(ctx, ks); err != nil {
		t.Fatal(err)
	}
	for i := range neighbours {
		key := types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("web-%02d", i)}
		waitFor(t, "StatefulSet "+key.String()+" applied", []*controller{ctl}, func(ctx context.Context) (bool, error) {
			return cl.admin.Get(ctx, key, &appsv1.StatefulSet{}) == nil, nil
		})
		waitRolloutDone(t, cl.admin, key, 1, "1Gi", ctl)
	}
	return ns
}

// bombSubcharts are two subcharts in Git, each a few KiB compressed and
// 20 MiB unpacked: within Helm's own bounds for each archive (100 MiB, 5
// MiB a file), so Flux installs the chart, and together over the 32 MiB
// claimwarden unpacks for all of a chart's archives.
func bombSubcharts(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range []string{"filler-a", "filler-b"} {
		var buf bytes.Buffer
		gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		tw := tar.NewWriter(gz)
		add := func(p string, data []byte) {
			if err := tw.WriteHeader(&tar.Header{Name: name + "/" + p, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Write(data); err != nil {
				t.Fatal(err)
			}
		}
		add("Chart.yaml", []byte("apiVersion: v2\nname: "+name+"\nversion: 0.1.0\n"))
		for i := range 5 {
			add(fmt.Sprintf("files/zeros-%d.txt", i), make([]byte, 4<<20))
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := gz.Close(); err != nil {
			t.Fatal(err)
		}
		out["chart/charts/"+name+"-0.1.0.tgz"] = buf.String()
	}
	return out
}

// forgedSeries are the kubelet's volume statistics as a tenant's exporter
// forges them for the neighbours' first claim: 120% full, labelled as the
// kubelet's job (honoured), and for the second under the exporter's own
// job, which the selector does not read.
func forgedSeries(ns string) string {
	var b strings.Builder
	for _, s := range []struct{ claim, labels string }{
		{"data-web-00-0", `job="kubelet",metrics_path="/metrics",instance="node-b:10250"`},
		{"data-web-01-0", `instance="node-b:10250"`},
	} {
		for name, v := range map[string]string{"capacity_bytes": "1073741824", "used_bytes": "1288490188", "inodes": "65536", "inodes_used": "10"} {
			fmt.Fprintf(&b, "kubelet_volume_stats_%s{namespace=%q,persistentvolumeclaim=%q,%s} %s\n", name, ns, s.claim, s.labels, v)
		}
	}
	return b.String()
}

// peakRSS is a process's peak resident memory (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("/proc/%d/status has no VmHWM", pid)
	return 0
}
