// Command autoresizescale measures autoresize at fleet size (issue 42): a
// fleet of opted-in StatefulSets at rest for a number of autoresize
// rounds, then a share of them filling. It reports the Git host's
// requests per round at rest and while proposing, Prometheus's queries per
// round, the controller's CPU and peak RSS, and the time from a volume
// crossing the threshold to its pull request. A benchmark, not a test: it
// judges nothing.
//
// Run it from the repository root after `make testenv build` (make
// bench-autoresize does both):
//
//	go run ./test/autoresizescale [-statefulsets 1000] [-namespaces 50] [-repositories 20] [-claims 3] [-rest-rounds 10] [-filling 5]
//
// It starts a control plane with kwok and the storage simulator, which
// also serves the kubelet's volume statistics (test/storagesim), a real
// Prometheus scraping them (test/promenv) and a real Gitea (test/gitea)
// behind a counting proxy. Each namespace's StatefulSets are one Flux
// Kustomization's (its inventory names them; no Flux controller runs:
// the objects are what autoresize reads), from a directory of one of the
// repositories, which holds their manifests. The claimwarden binary runs
// with --flux and autoresize on every namespace.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/claimwarden/claimwarden/test/benchkit"
)

// options are the command-line flags.
type options struct {
	statefulSets, namespaces, repositories, claims int
	restRounds                                     int
	fillingPercent                                 int
	interval                                       time.Duration
	controller                                     string
	timeout                                        time.Duration
}

func main() {
	var o options
	// A flag set of our own: controller-runtime registers -kubeconfig on the global one.
	fs := flag.NewFlagSet("autoresizescale", flag.ExitOnError)
	fs.IntVar(&o.statefulSets, "statefulsets", 1000, "opted-in StatefulSets (one replica each)")
	fs.IntVar(&o.namespaces, "namespaces", 50, "namespaces the StatefulSets are spread over, one Kustomization each")
	fs.IntVar(&o.repositories, "repositories", 20, "Git repositories the Kustomizations are spread over")
	fs.IntVar(&o.claims, "claims", 3, "volume claim templates (so claims) per StatefulSet")
	fs.IntVar(&o.restRounds, "rest-rounds", 10, "autoresize rounds measured at rest")
	fs.IntVar(&o.fillingPercent, "filling", 5, "percent of the StatefulSets whose first claim then fills past the threshold")
	fs.DurationVar(&o.interval, "interval", 10*time.Second, "autoresize.interval")
	fs.StringVar(&o.controller, "controller", "", "claimwarden binary to run (default: build ./cmd/claimwarden)")
	fs.DurationVar(&o.timeout, "timeout", time.Hour, "give up on the whole run after this long")
	_ = fs.Parse(os.Args[1:]) // ExitOnError: a bad flag exits with usage
	if o.statefulSets < 1 || o.namespaces < 1 || o.repositories < 1 || o.claims < 1 || o.restRounds < 1 ||
		o.fillingPercent < 0 || o.fillingPercent > 100 || o.interval < time.Second || fs.NArg() > 0 {
		fs.Usage()
		os.Exit(2)
	}
	o.namespaces = min(o.namespaces, o.statefulSets)
	o.repositories = min(o.repositories, o.namespaces)

	ctx, stop := benchkit.InterruptContext()
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "autoresizescale:", err)
		os.Exit(1)
	}
}
