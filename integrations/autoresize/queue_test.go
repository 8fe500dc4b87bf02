package autoresize

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/usage"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// hangingUsage is a Prometheus that never answers some namespaces and
// ignores the context while it does not (as Helm's engine did): a check
// that reads from it returns only once release is closed.
type hangingUsage struct {
	mu      sync.Mutex
	hangs   func(ns string) bool
	release chan struct{}
	// reading and most are the reads of each namespace under way, and the
	// most there ever were at once.
	reading, most map[string]int
	// calls counts the reads.
	calls atomic.Int64
}

func (u *hangingUsage) Claims(_ context.Context, ns string, _ time.Time) (map[string]usage.Usage, error) {
	u.calls.Add(1)
	u.mu.Lock()
	hangs := u.hangs(ns)
	u.reading[ns]++
	u.most[ns] = max(u.most[ns], u.reading[ns])
	u.mu.Unlock()
	if hangs {
		<-u.release
	}
	u.mu.Lock()
	u.reading[ns]--
	u.mu.Unlock()
	return map[string]usage.Usage{}, nil
}

// Namespaces reads the namespaces nss at once (a round's batch, no
// check's own read): it hangs as the read of any of them does.
func (u *hangingUsage) Namespaces(_ context.Context, nss []string, _ time.Time) (map[string]map[string]usage.Usage, error) {
	u.calls.Add(1)
	u.mu.Lock()
	hangs := slices.ContainsFunc(nss, u.hangs)
	u.mu.Unlock()
	if hangs {
		<-u.release
	}
	return map[string]map[string]usage.Usage{}, nil
}

func (u *hangingUsage) hang(f func(ns string) bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.hangs = f
}

// One StatefulSet's check hangs and ignores its deadline: the 20 others
// are checked all the same, within a bound, and the hanging one is
// reported as stuck in its status and the metric, and not checked twice
// at once. Once every check hangs, liveness fails; Start returns promptly
// when its context ends, hung checks or not; once the checks return,
// liveness passes again. On a real API server with claimwarden's CRDs.
func TestAStuckCheckDelaysNoOther(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{CRDDirs: []string{filepath.Join("..", "..", "config", "crd", "bases")}})
	c := testenv.Client(t, env.Config, v1alpha1.AddToScheme)
	ctx := context.Background()
	// "hog" sorts before "shop": a loop that checks one StatefulSet after
	// another reaches shop's only after hog's.
	var shop []client.ObjectKey
	for i := range 20 {
		shop = append(shop, client.ObjectKey{Namespace: "shop", Name: fmt.Sprintf("web-%02d", i)})
	}
	hog := client.ObjectKey{Namespace: "hog", Name: "db"}
	for _, ns := range []string{"hog", "shop"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range append([]client.ObjectKey{hog}, shop...) {
		for _, o := range []client.Object{statefulSet(key), &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}} {
			if err := c.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}

	u := &hangingUsage{hangs: func(ns string) bool { return ns == "hog" }, release: make(chan struct{}), reading: map[string]int{}, most: map[string]int{}}
	released := sync.OnceFunc(func() { close(u.release) })
	t.Cleanup(released)
	const timeout = time.Second
	ctl := &Controller{Client: c, Reader: c, Writer: rollout.NewWriter(c, c), Proposals: proposal.NewStore(), Usage: u, Metrics: NewMetrics(""), Log: logr.Discard(),
		Options: Options{Rules: []Rule{{Namespace: "*", AllStatefulSets: true}}, Interval: 100 * time.Millisecond, Concurrency: 4, CheckTimeout: timeout}}
	if err := ctl.Healthz(nil); err != nil {
		t.Errorf("liveness where the loop does not run (not the leader): %v", err)
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	started := time.Now()
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		if err := ctl.Start(runCtx); err != nil {
			t.Error(err)
		}
	}()

	status := func(key client.ObjectKey) *v1alpha1.AutoresizeStatus {
		vcr := &v1alpha1.VolumeClaimRollout{}
		if err := c.Get(ctx, key, vcr); err != nil {
			t.Fatal(err)
		}
		return vcr.Status.Autoresize
	}
	// Each of the 20 is checked once in a few seconds (its checks take
	// milliseconds); hog's hangs from the start.
	within(t, 15*time.Second, "the 20 StatefulSets of shop checked while hog's check hangs", func() bool {
		for _, key := range shop {
			if st := status(key); st == nil || !strings.Contains(st.Message, "there is no repository to propose a resize to") {
				return false
			}
		}
		return true
	})
	t.Logf("the 20 checked %s after the start", time.Since(started).Round(time.Millisecond))
	within(t, 10*time.Second, "hog's check reported stuck", func() bool {
		st := status(hog)
		return st != nil && strings.Contains(st.Message, "hog/db is not checked again until it does")
	})
	if got := testutil.ToFloat64(stuckChecks.WithLabelValues("in-cluster")); got != 1 {
		t.Errorf("claimwarden_autoresize_stuck_checks %v, want 1 (hog's)", got)
	}
	// More rounds pass, hog's check still hanging: the others are checked
	// again, and liveness holds.
	rounds := testutil.ToFloat64(checksTotal.WithLabelValues("in-cluster"))
	reads := u.calls.Load()
	within(t, 10*time.Second, "three more rounds", func() bool { return testutil.ToFloat64(checksTotal.WithLabelValues("in-cluster")) >= rounds+3 })
	if err := ctl.Healthz(nil); err != nil {
		t.Errorf("liveness with one stuck check among 21: %v", err)
	}
	// shop's once a round (a round may be under way at either end), hog's
	// none: its check has not returned.
	if got := u.calls.Load() - reads; got > 5 {
		t.Errorf("%d reads of usage in three rounds over two namespaces, hog's hanging: want one per namespace and round", got)
	}

	// Every check hangs: no check returns, and liveness fails within
	// 2 × the timeout + the interval of the last return.
	u.hang(func(string) bool { return true })
	within(t, 60*time.Second, "liveness failing once every check hangs", func() bool { return ctl.Healthz(nil) != nil })
	t.Logf("liveness: %v", ctl.Healthz(nil))

	stop()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("Start did not return within 5s of its context's end, with checks hanging")
	}

	released()
	within(t, 10*time.Second, "liveness passing once the checks returned", func() bool { return ctl.Healthz(nil) == nil })
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.most["hog"] != 1 {
		t.Errorf("hog's StatefulSet was read by %d checks at once, want 1: not checked again before its check returned", u.most["hog"])
	}
}

// within polls cond until it holds, failing t after d.
func within(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, d, true, func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("%s: not within %s", what, d)
	}
}

func statefulSet(key client.ObjectKey) *appsv1.StatefulSet {
	labels := map[string]string{"app": key.Name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}},
			},
		},
	}
}
