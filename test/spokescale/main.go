// Command spokescale measures claimwarden on a hub with spokes (issue 41):
// its memory, cache sync and watch streams with 0, 1, 3 and 10 spokes, and
// the time from a template change to the rollout's first step on a spoke
// and in the hub's own cluster. A benchmark, not a test: it judges nothing.
//
// Run it from the repository root after `make testenv build` (make
// bench-spokes does both):
//
//	go run ./test/spokescale [-controller bin/claimwarden] [-spokes 0,1,3,10] [-latency-rounds 5]
//
// It starts two control planes with kwok and the storage simulator
// (test/testenv, test/storagesim), the hub and one spoke, and creates
// -statefulsets StatefulSets on the spoke. For each N of -spokes it starts
// the claimwarden binary on the hub with N simulated spokes (see
// simulation in report.go), waits until its caches synced and no request
// reached any cluster for -settle, watches it for -rest-window, and
// measures it; then it stops it. Last, with one spoke, it grows a probe
// StatefulSet's claim template on each cluster in turn and reads the
// first-step latency from the API servers' audit logs (latency.go).
//
// Everything it started is stopped at the end and on Ctrl-C. The logs
// (claimwarden's per N, the simulators') are kept, with the control
// planes', when the run fails or testenv's keep variable
// (testenv.KeepEnv) is set.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/test/benchkit"
)

// maxSpokes bounds -spokes: each is a proxy, a cluster.Cluster and a
// rollout controller on this machine.
const maxSpokes = 100

// options are the command-line flags.
type options struct {
	spokes        []int
	statefulSets  int
	replicas      int
	namespaces    int
	settle        time.Duration
	restWindow    time.Duration
	latencyRounds int
	controller    string
	timeout       time.Duration
	selector      string
}

// bench is what the run started.
type bench struct {
	o     options
	began time.Time
	dir   string
	bin   string
	hub   *cluster
	spoke *cluster
	// idleWatches is the spoke's kube-apiserver's open WATCH requests
	// before any claimwarden ran.
	idleWatches int
}

func main() {
	var o options
	// A flag set of our own: controller-runtime registers -kubeconfig on the global one.
	fs := flag.NewFlagSet("spokescale", flag.ExitOnError)
	spokes := fs.String("spokes", "0,1,3,10", "numbers of simulated spokes to measure, comma-separated")
	fs.IntVar(&o.statefulSets, "statefulsets", 20, "StatefulSets on the spoke")
	fs.IntVar(&o.replicas, "replicas", 2, "replicas (and 1Gi claims) per StatefulSet")
	fs.IntVar(&o.namespaces, "namespaces", 4, "namespaces the StatefulSets are spread over")
	fs.DurationVar(&o.settle, "settle", 5*time.Second, "the controller is at rest once no API request reached any cluster for this long")
	fs.DurationVar(&o.restWindow, "rest-window", 15*time.Second, "how long the controller is watched at rest before it is measured")
	fs.IntVar(&o.latencyRounds, "latency-rounds", 5, "template changes on each cluster for the first-step latency (0: none)")
	fs.StringVar(&o.controller, "controller", "", "claimwarden binary to run (default: build ./cmd/claimwarden)")
	fs.DurationVar(&o.timeout, "timeout", time.Hour, "give up on the whole run after this long")
	fs.StringVar(&o.selector, "selector", measuredLabel+"=true", "claimwarden's labelSelector; the spoke's StatefulSets do not carry the default's label (the latency probes do), and '' makes every simulated spoke manage them all, to see N rollout controllers share one real cluster")
	_ = fs.Parse(os.Args[1:]) // ExitOnError: a bad flag exits with usage
	var err error
	if o.spokes, err = parseSpokes(*spokes); err != nil || o.statefulSets < 1 || o.replicas < 1 || o.namespaces < 1 ||
		o.settle <= 0 || o.restWindow < 0 || o.latencyRounds < 0 || fs.NArg() > 0 {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		fs.Usage()
		os.Exit(2)
	}
	o.namespaces = min(o.namespaces, o.statefulSets)

	ctx, stopSignals := benchkit.InterruptContext()
	defer stopSignals()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "spokescale:", err)
		os.Exit(1)
	}
}

// parseSpokes reads -spokes: distinct numbers from 0 to maxSpokes.
func parseSpokes(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 || n > maxSpokes {
			return nil, fmt.Errorf("-spokes: %q is not a number of spokes from 0 to %d", f, maxSpokes)
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("-spokes: %d is listed twice", n)
		}
		out = append(out, n)
	}
	return out, nil
}

// run starts everything, measures, prints, and always stops what it started.
func run(ctx context.Context, o options) (err error) {
	interrupted := ctx.Err
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	b := &bench{o: o, began: time.Now()}
	w, err := benchkit.NewWorkdir(ctx, "spokescale", o.controller, b.logf)
	if err != nil {
		return err
	}
	defer func() { w.Close(err != nil) }()
	root := w.Root
	b.dir, b.bin = w.Dir, w.Bin
	b.logf("load average %s; starting the hub's and the spoke's control planes", loadAverage())
	var stops []func() error
	defer func() {
		b.logf("stopping the control planes and storage simulators")
		for _, stop := range slices.Backward(stops) {
			err = errors.Join(err, stop())
		}
	}()
	// A failed run keeps the control planes' logs (an interrupted one does not).
	keep := func(cl *cluster) func() error {
		return func() error {
			if err != nil && interrupted() == nil {
				cl.env.KeepDir = true
				fmt.Printf("the %s's control plane logs kept in %s\n", cl.name, cl.env.Dir)
			}
			return nil
		}
	}
	// The simulated resize is short: the latency rounds wait for each
	// rollout, and the storage's speed is not what they measure.
	const delay = 500 * time.Millisecond
	for _, c := range []struct {
		name string
		dst  **cluster
	}{{"hub", &b.hub}, {"spoke", &b.spoke}} {
		cl, stop, err := startCluster(ctx, root, c.name, delay)
		stops = append(stops, stop)
		if err != nil {
			return err
		}
		stops = append(stops, keep(cl))
		*c.dst = cl
	}
	if err := b.hub.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: argoNamespace}}); err != nil {
		return err
	}
	b.logf("creating %d StatefulSets × %d replicas on the spoke", o.statefulSets, o.replicas)
	if err := b.createWorkload(ctx); err != nil {
		return err
	}
	if b.idleWatches, err = apiServerWatches(ctx, b.spoke); err != nil {
		return err
	}

	var rows []row
	for _, n := range o.spokes {
		b.logf("N=%d: starting claimwarden with %d simulated spoke(s)", n, n)
		r, err := b.measureRow(ctx, n)
		if err != nil {
			return fmt.Errorf("with %d spokes: %w", n, err)
		}
		rows = append(rows, r)
		b.logf("N=%d: RSS at rest %s (peak %s), %d watches per spoke", n, kib(r.RestRSS), kib(r.PeakRSS), r.APIServerWatches/max(n, 1))
	}
	var lat latencies
	if o.latencyRounds > 0 {
		b.logf("latency: claimwarden with one spoke, %d template changes on each cluster", o.latencyRounds)
		if lat, err = b.measureLatency(ctx, o.latencyRounds); err != nil {
			return fmt.Errorf("latency: %w", err)
		}
	}

	fmt.Printf("\n%s\n\n", simulation(o.selector))
	fmt.Printf("claimwarden %s; %d StatefulSets × %d replicas (1Gi) in %d namespaces on the spoke; at rest: no API request for %s, then %s\n\n",
		b.bin, o.statefulSets, o.replicas, o.namespaces, o.settle, o.restWindow)
	printTable(os.Stdout, rows)
	if o.latencyRounds > 0 {
		fmt.Println()
		printLatency(os.Stdout, lat)
	}
	return nil
}

// logf prints a progress line with the time since the run began.
func (b *bench) logf(format string, args ...any) {
	fmt.Printf("[%6.1fs] %s\n", time.Since(b.began).Seconds(), fmt.Sprintf(format, args...))
}
