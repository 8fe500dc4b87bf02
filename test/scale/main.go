// Command scale measures claimwarden at scale on a real control plane.
//
// Run it from the repository root after `make testenv` (it builds the
// controller itself unless -controller names a binary):
//
//	go run ./test/scale [-statefulsets 200] [-replicas 3] [-delay 2s] [-out report.json]
//	go run ./test/scale -tiers 200x3/10,2000x3/20@3 [-out report.json]
//
// It starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
// kwok (test/testenv), the storage simulator in this process
// (test/storagesim) and the claimwarden binary as a subprocess, then:
//
//  1. creates the StatefulSets (1Gi claims) across namespaces and waits until
//     every Pod is Ready, every PVC Bound and every VolumeClaimRollout Ready;
//  2. measures the controller at rest: an idle window, then one no-op
//     reconcile of every StatefulSet; both must write nothing;
//  3. bumps every StatefulSet's template to 2Gi the way users do today
//     (orphan delete and re-create) and times the rollouts until every
//     VolumeClaimRollout is Ready at 2Gi, against the simulator's lower bound;
//  4. reports the controller's API requests during the bump per PVC changed,
//     split by verb and resource, each resize step split into the
//     controller's and the storage's share (steps.go), and its peak memory;
//  5. stops the controller and times the manual procedure on the same
//     control plane (manual.go), for the ratio of the two.
//
// -tiers runs several sizes one after the other, each on a fresh control
// plane, and prints them side by side (tiers.go); -runs repeats each for
// the median of its ratios.
//
// -crowd (a tier's +crowd) first fills the namespaces with a big cluster's
// objects that are not claimwarden's (crowd.go), starts the controller among
// them (watching Helm release records there too) and judges its peak memory
// and the time its caches take to sync.
//
// Everything it started is stopped at the end and on Ctrl-C; a second Ctrl-C
// kills it at once, and the components die with it (parent-death signal).
// Set testenv's keep variable (testenv.KeepEnv) to keep the logs
// (claimwarden.log, storagesim.log and the control plane's) in the
// directory printed at the end.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/claimwarden/claimwarden/test/benchkit"
)

// options are the command-line flags.
type options struct {
	statefulSets int
	replicas     int
	namespaces   int
	delay        time.Duration
	workers      int
	out          string
	controller   string
	settle       time.Duration
	restWindow   time.Duration
	timeout      time.Duration
	// maxConcurrentPatches is the controller's --max-concurrent-patches.
	maxConcurrentPatches int
	clientQPS            int
	manual               bool
	// controllerWorkers is the controller's --workers; 0 keeps its default.
	controllerWorkers int
	// profile, when set, is where CPU profiles of the controller and of
	// kube-apiserver during the bump are written (their first
	// profileSeconds).
	profile        string
	profileSeconds int
	// crowd is the share of the big cluster's objects (crowdAtOne) created
	// around the StatefulSets before the controller starts; 0: none.
	crowd float64
	// tier names the run among tiers (-tiers, -runs) for its output files.
	tier  tier
	tiers int
}

func main() {
	var o options
	// A flag set of our own: controller-runtime, which this program links,
	// registers -kubeconfig on the global one, and this program would ignore it.
	fs := flag.NewFlagSet("scale", flag.ExitOnError)
	fs.IntVar(&o.statefulSets, "statefulsets", 200, "StatefulSets to create")
	fs.IntVar(&o.replicas, "replicas", 3, "replicas (and PVCs) per StatefulSet")
	fs.IntVar(&o.namespaces, "namespaces", 10, "namespaces the StatefulSets are spread over")
	fs.DurationVar(&o.delay, "delay", 2*time.Second, "simulated duration of one volume resize (0: instant)")
	fs.IntVar(&o.workers, "workers", 20, "concurrent creates and template bumps (orphan delete + re-create)")
	fs.StringVar(&o.out, "out", "", "also write the report as JSON to this file")
	fs.StringVar(&o.controller, "controller", "", "claimwarden binary to run (default: build ./cmd/claimwarden)")
	fs.DurationVar(&o.settle, "settle", 5*time.Second, "the controller is quiet once its reconcile and request counts do not change over this long")
	fs.DurationVar(&o.restWindow, "rest-window", 30*time.Second, "idle window observed at rest")
	fs.DurationVar(&o.timeout, "timeout", 45*time.Minute, "give up on the whole run after this long")
	fs.IntVar(&o.maxConcurrentPatches, "max-concurrent-patches", 1, "the controller's --max-concurrent-patches: claims of one StatefulSet resized at once")
	fs.IntVar(&o.clientQPS, "control-plane-qps", 500, "client-side QPS of kube-controller-manager and kube-scheduler (setup of thousands of claims is throttled at their defaults)")
	fs.IntVar(&o.controllerWorkers, "controller-workers", 0, "the controller's --workers: StatefulSets reconciled at once (0: its default)")
	fs.StringVar(&o.profile, "profile", "", "write a CPU profile of the controller during the bump to this file, and kube-apiserver's beside it with -apiserver added to the name, and kube-apiserver's during the manual procedure with -manual-apiserver (read them with go tool pprof BINARY FILE); with -tiers, one set per tier")
	fs.IntVar(&o.profileSeconds, "profile-seconds", 60, "how long the -profile CPU profiles run from the start of the bump and of the manual procedure")
	fs.Float64Var(&o.crowd, "crowd", 0, "before the controller starts, fill the namespaces with a big cluster's objects that are not claimwarden's, this share of "+crowdAtOne.String()+" (a tier's +crowd is 1); the controller then also watches Helm release records there")
	fs.BoolVar(&o.manual, "manual", true, "after the bump, stop the controller and time the manual procedure (patch PVCs, orphan delete, re-create) on the same control plane")
	var tierList string
	fs.StringVar(&tierList, "tiers", "", "run several tiers one after the other, each on a fresh control plane, and print them side by side: STATEFULSETSxREPLICAS/NAMESPACES[@MAXCONCURRENTPATCHES][+crowd],... (overrides -statefulsets, -replicas, -namespaces, and -crowd for a +crowd tier)")
	runs := fs.Int("runs", 1, "run each tier this many times, one after the other, and print the median of its ratios to the manual procedure (this machine's speed drifts too much for one run to judge them)")
	_ = fs.Parse(os.Args[1:]) // ExitOnError: a bad flag exits with usage
	if *runs < 1 || o.statefulSets < 1 || o.replicas < 1 || o.namespaces < 1 || o.workers < 1 || o.delay < 0 || o.maxConcurrentPatches < 1 || o.clientQPS < 0 || o.controllerWorkers < 0 || o.profileSeconds < 1 || o.crowd < 0 ||
		o.settle <= 0 || o.restWindow < 0 || fs.NArg() > 0 {
		fs.Usage()
		os.Exit(2)
	}
	o.namespaces = min(o.namespaces, o.statefulSets)

	ctx, stopSignals := benchkit.InterruptContext()
	defer stopSignals()

	tiers := []tier{{statefulSets: o.statefulSets, replicas: o.replicas, namespaces: o.namespaces}}
	if tierList != "" {
		var err error
		if tiers, err = parseTiers(tierList); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	tiers = repeated(tiers, *runs)
	var reps []*Report
	failed := false
	concurrency, crowd := o.maxConcurrentPatches, o.crowd
	for _, t := range tiers {
		o.statefulSets, o.replicas, o.namespaces = t.statefulSets, t.replicas, t.namespaces
		o.maxConcurrentPatches = cmp.Or(t.concurrency, concurrency)
		if o.crowd = crowd; t.crowd {
			o.crowd = 1
		}
		o.tier, o.tiers = t, len(tiers)
		for name, v := range map[string]int{"statefulsets": t.statefulSets, "replicas": t.replicas, "namespaces": t.namespaces, "max-concurrent-patches": o.maxConcurrentPatches} {
			_ = fs.Set(name, strconv.Itoa(v)) // an int flag takes any Itoa
		}
		began := time.Now()
		rep, err := run(ctx, o)
		reps = append(reps, rep)
		if rep != nil {
			// The effective values, defaults included: `go run` leaves only a
			// temporary binary's path in os.Args[0].
			fs.VisitAll(func(f *flag.Flag) {
				rep.Flags = append(rep.Flags, "-"+f.Name+"="+f.Value.String())
			})
			rep.WallSeconds = time.Since(began).Seconds()
			rep.print(os.Stdout)
			if out := tierOut(o.out, o.tier, o.tiers); out != "" {
				if werr := rep.writeJSON(out); werr != nil {
					err = errors.Join(err, werr)
				} else {
					fmt.Printf("JSON report: %s\n", out)
				}
			}
		}
		switch {
		case err == nil:
		case ctx.Err() != nil && errors.Is(err, context.Canceled):
			fmt.Fprintln(os.Stderr, "interrupted; everything the run started has been stopped")
			os.Exit(130)
		default:
			fmt.Fprintf(os.Stderr, "scale run %s failed: %v\n", t, err)
			failed = true
		}
	}
	if len(tiers) > 1 {
		printTiers(os.Stdout, tiers, reps)
	}
	if failed {
		os.Exit(1)
	}
}

// tierOut is where a tier's JSON report goes: -out itself for one tier,
// -out with the tier (and run) before its extension for several.
func tierOut(out string, t tier, tiers int) string {
	if out == "" || tiers <= 1 {
		return out
	}
	ext := filepath.Ext(out)
	return strings.TrimSuffix(out, ext) + "-" + t.file() + ext
}
