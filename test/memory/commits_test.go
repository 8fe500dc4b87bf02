package memory_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/commitstatus"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.RunTests(m, testenv.Options{CRDDirs: []string{filepath.Join("..", "..", "config", "crd", "bases")}}, &env))
}

const (
	namespace    = "commits"
	statefulSets = 20
	commits      = 10_000
	// checkpoint is where memory is first measured: by then every bounded
	// memory (below, sized small on purpose) is full.
	checkpoint = 2_000
	// maxGrowthPerCommit is what each further commit may add to the live
	// heap, on average: far below what remembering it would cost (a map
	// entry with a 40-character SHA and a context is ≥ 150 bytes).
	maxGrowthPerCommit = 64
)

// host is the Git host behind the commit-status sink. It remembers only
// the last commit posted per context, so that the test itself stays flat.
type host struct {
	mu     sync.Mutex
	last   map[string]string
	posted int
}

func (h *host) Post(_ context.Context, _ githost.Repository, sha string, s commitstatus.Status) error {
	if s.State != commitstatus.Success {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last[s.Context] = sha
	h.posted++
	return nil
}

func (h *host) lastOn(context string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last[context]
}

// TestMemoryFlatOverTenThousandCommits sends 10,000 distinct commits
// through a running controller (StatefulSet annotations naming repository
// and commit, a rollout per commit, a commit status per commit through the
// real commit-status sink and Reporter) and shows the live heap does not
// grow with them.
func TestMemoryFlatOverTenThousandCommits(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs, err := os.Create(filepath.Join(env.Dir, "controller.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	ctrl.SetLogger(zap.New(zap.WriteTo(logs)))
	scheme := kruntime.NewScheme()
	for _, add := range []func(*kruntime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		// As cmd/claimwarden/app caches: without managedFields.
		Cache: cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
	})
	if err != nil {
		t.Fatal(err)
	}
	engine, err := policies.New(ctx, policies.Options{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Stop()
	git := &host{last: map[string]string{}}
	sink := commitstatus.NewCommitStatusSink(commitstatus.CommitStatusSinkOptions{
		Reporter: commitstatus.ReporterOptions{
			Providers: func(githost.Repository) (commitstatus.Provider, error) { return git, nil },
			// Small, so that its memory of posted commits (10 × QueueSize)
			// is full long before the checkpoint.
			QueueSize: 2 * statefulSets,
		},
		Records:         rollout.NewWriter(mgr.GetClient(), mgr.GetAPIReader()),
		MaxStatefulSets: statefulSets,
	})
	if err := mgr.Add(sink); err != nil {
		t.Fatal(err)
	}
	if _, err := rollout.SetupWithManager(mgr, rollout.Options{
		Workers:          4,
		Policies:         engine,
		Sinks:            []outcome.Sink{sink},
		EventMemory:      statefulSets,
		JournalKeySecret: types.NamespacedName{Namespace: namespace, Name: "claimwarden-journal-key"},
		// The StatefulSets name their repository in annotations.
		WorkloadAnnotations: rollout.NewWorkloadAnnotations([]rollout.AnnotationRule{{Namespace: "*", RepositoryPrefixes: []string{"https://git.example.com/shop"}}}),
	}); err != nil {
		t.Fatal(err)
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := fixtures.Namespace(ctx, c, namespace); err != nil {
		t.Fatal(err)
	}
	for i := range statefulSets {
		// No replicas: nothing to patch, so each commit's rollout is
		// complete at once and the test measures the reporting path.
		sts := fixtures.StatefulSet(namespace, fmt.Sprintf("db-%02d", i), 0, "standard", "1Gi")
		sts.Annotations = map[string]string{v1alpha1.RepositoryAnnotation: "https://git.example.com/shop/db"}
		if err := c.Create(ctx, sts); err != nil {
			t.Fatal(err)
		}
	}

	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	send := func(from, to int) {
		t.Helper()
		var g errgroup.Group
		for s := range statefulSets {
			g.Go(func() error {
				name := fmt.Sprintf("db-%02d", s)
				statusContext := commitstatus.StatusContext(v1alpha1.ControllerName, namespace, name)
				for n := from + s; n < to; n += statefulSets {
					sha := fmt.Sprintf("%040x", n+1)
					patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, v1alpha1.RevisionAnnotation, sha)
					sts := fixtures.StatefulSet(namespace, name, 0, "standard", "1Gi")
					if err := c.Patch(ctx, sts, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
						return err
					}
					// The next commit waits for this one's status, so that
					// every commit is reported, none coalesced away.
					if err := wait.PollUntilContextTimeout(ctx, 2*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
						return git.lastOn(statusContext) == sha, nil
					}); err != nil {
						return fmt.Errorf("commit %s on %s never got its status: %w", sha, name, err)
					}
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			t.Fatal(err)
		}
	}

	began := time.Now()
	send(0, checkpoint)
	atCheckpoint := heap()
	send(checkpoint, commits)
	atEnd := heap()
	growth := int64(atEnd) - int64(atCheckpoint)
	perCommit := float64(growth) / float64(commits-checkpoint)
	t.Logf("%d commits in %s; live heap %.1f MiB after %d commits, %.1f MiB after %d: %+.1f bytes per commit",
		commits, time.Since(began).Round(time.Second), float64(atCheckpoint)/(1<<20), checkpoint, float64(atEnd)/(1<<20), commits, perCommit)
	if perCommit > maxGrowthPerCommit {
		t.Errorf("the live heap grew by %d bytes over %d commits (%.1f per commit, at most %d allowed): something remembers every commit",
			growth, commits-checkpoint, perCommit, maxGrowthPerCommit)
	}
	if git.posted < commits {
		t.Errorf("%d success statuses posted for %d commits", git.posted, commits)
	}
}
