// Command demo tells claimwarden's story on a local control plane. Five stories:
//
//   - kubectl (`make demo`): a StatefulSet whose volumeClaimTemplates cannot be
//     changed, the orphan delete and re-create users do today, and claimwarden
//     bringing the existing claims to the new template while the Pods keep running;
//   - flux (`make demo-flux`): the same StatefulSet kept in a Gitea repository
//     and applied by Flux; a commit that grows the volumes makes Flux fail,
//     claimwarden re-creates the StatefulSet, grows the claims and posts
//     "success" on the commit; a commit growing them +300% is denied by the
//     max-step policy, with "failure" on that commit;
//   - helm (`make demo-helm`): the StatefulSet in a chart kept in Gitea and
//     released by a Flux HelmRelease; a chart bump that grows the volumes
//     makes helm-controller's upgrade fail, claimwarden re-creates the
//     StatefulSet from the failed release's record, asks helm-controller to
//     upgrade again, grows the claims and posts "success"; a bump of +300%
//     is denied, with "failure" on that commit;
//   - argocd (`make demo-argocd`): the same commits synced by an Argo CD
//     Application with automated sync; claimwarden reads the desired
//     StatefulSet through argocd-server's API with a token of its own account,
//     and syncs the Application once it converged the StatefulSet;
//   - autoresize (`make demo-autoresize`): the flux story's StatefulSet fills
//     up; a real Prometheus scrapes the simulated kubelet's volume statistics,
//     claimwarden opens a pull request in Gitea that grows the size line, a
//     person merges it, Flux applies it, claimwarden grows the claims without
//     restarting a Pod and posts "success" on the merge commit.
//
// Run it from the repository root after `make testenv build`:
//
//	go run ./test/demo [-story kubectl|flux|helm|argocd|autoresize] [-delay 3s] [-replicas 3] [-keep]
//
// The control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, kwok), Gitea, Flux (with Helm), Argo CD (with Redis), Prometheus and the controller
// are the real programs; only the storage is simulated (test/storagesim).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// options are the demo's command-line flags.
type options struct {
	story    string
	delay    time.Duration
	replicas int
	keep     bool
}

func main() {
	var o options
	flag.StringVar(&o.story, "story", "kubectl", "the story to tell: kubectl (the orphan re-create by hand), flux (commits in Gitea applied by Flux), helm (chart bumps in Gitea released by a Flux HelmRelease), argocd (commits in Gitea synced by Argo CD) or autoresize (a filling volume, a pull request from claimwarden, merged and applied by Flux)")
	flag.DurationVar(&o.delay, "delay", 3*time.Second, "how long each simulated volume resize takes")
	flag.IntVar(&o.replicas, "replicas", 3, "replicas (and claims) of the demo StatefulSet")
	flag.BoolVar(&o.keep, "keep", false, "leave the cluster running after the story, until Ctrl-C")
	flag.Parse()
	s, ok := stories[o.story]
	if !ok || o.replicas < 1 || o.delay < 0 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}

	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	// After the first Ctrl-C the default action comes back, so a second one
	// kills the demo at once; the components die with it (parent-death signal).
	go func() {
		<-ctx.Done()
		stopSignals()
	}()

	out := newPrinter(os.Stdout)
	err := run(ctx, o, s, out)
	switch {
	case err == nil:
		return
	case ctx.Err() != nil:
		// Whatever failed after the signal failed because of it.
		out.fail("interrupted; everything the demo started has been stopped")
		os.Exit(130)
	default:
		out.fail("demo failed: " + err.Error())
		os.Exit(1)
	}
}

// run starts the cluster, tells the story and always stops what it started.
func run(ctx context.Context, o options, s story, out *printer) (err error) {
	out.title(s.title)
	out.note(fmt.Sprintf("Storage is SIMULATED: test/storagesim plays the CSI provisioner, resizer and kubelet (each resize takes %s).", o.delay))
	out.note("Everything else is real: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok" + s.real + " and the claimwarden binary.")

	cl, err := startCluster(ctx, o, s, out)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil && ctx.Err() != nil {
			out.warn("interrupted: stopping what the demo started")
		}
		out.step("Cleaning up")
		// A failure keeps the logs for reading; an interrupt is not a failure.
		failed := err != nil && ctx.Err() == nil
		if stopErr := cl.stop(failed); stopErr != nil {
			out.fail(stopErr.Error())
			err = errors.Join(err, stopErr)
			return
		}
		out.ok("stopped " + cl.components())
		if failed {
			out.note("logs kept in " + cl.env.Dir)
		}
	}()

	if err := s.tell(ctx, cl, o, out); err != nil {
		return err
	}
	if o.keep {
		return keepRunning(ctx, cl, s, out)
	}
	return nil
}

// keepRunning leaves the cluster to the user until Ctrl-C.
func keepRunning(ctx context.Context, cl *cluster, s story, out *printer) error {
	kubectl := cl.env.BinDir + "/kubectl --kubeconfig " + cl.env.Kubeconfig
	out.step("The cluster keeps running; press Ctrl-C to stop it")
	out.cmd(kubectl + " get vcr,sts,pvc,pods -n " + namespace)
	out.cmd(kubectl + " get events -n " + namespace + " --sort-by=.metadata.creationTimestamp")
	if s.hints != nil {
		s.hints(cl, kubectl, out)
	}
	out.note("controller log: " + cl.ctrl.LogPath())
	<-ctx.Done()
	fmt.Println()
	return nil
}
