//go:build chaos

package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/claimwarden/claimwarden/reconciler/crashpoint"
	"github.com/claimwarden/claimwarden/test/controllerproc"
	"github.com/claimwarden/claimwarden/test/invariants"
)

// The chaos run's size: `make test` runs every fault once; `make chaos`
// passes -chaos.rollouts=60 -chaos.statefulsets=4.
var (
	chaosRollouts = flag.Int("chaos.rollouts", len(chaosFaults), "rollouts of TestChaos, each under the next fault in turn")
	chaosSets     = flag.Int("chaos.statefulsets", 2, "StatefulSets TestChaos rolls out in turn, each from its own repository and Kustomization")
	chaosSeed     = flag.Uint64("chaos.seed", 0, "seed of TestChaos's random moments; 0 picks one (logged)")
)

// fault is what goes wrong during one rollout.
type fault string

const (
	crashAfterJournal fault = "SIGKILL after the journal write"
	crashAfterDelete  fault = "SIGKILL after the orphan delete"
	crashAfterCreate  fault = "SIGKILL after the re-create"
	crashBetween      fault = "SIGKILL between claim patches"
	randomKill        fault = "SIGKILL at a random moment"
	apiserverRestart  fault = "kube-apiserver restart"
	etcdRestart       fault = "etcd restart"
	leaderKill        fault = "leader SIGKILLed mid-convergence"
	superseding       fault = "commits back to back, each as the StatefulSet is re-created"
)

var chaosFaults = []fault{crashAfterJournal, crashAfterDelete, crashAfterCreate, crashBetween, randomKill, apiserverRestart, etcdRestart, leaderKill, superseding}

var crashSteps = map[fault]crashpoint.Step{
	crashAfterJournal: crashpoint.JournalWritten, crashAfterDelete: crashpoint.OrphanDeleted,
	crashAfterCreate: crashpoint.Created, crashBetween: crashpoint.ClaimPatched,
}

// chaosStats is the run's summary.
type chaosStats struct {
	rollouts, crashpoints, missedCrashpoints, apiRestarts, etcdRestarts int
	// superseded counts the commits of superseding bursts that a newer one
	// replaced mid-convergence.
	superseded int
	recovery   map[fault][]time.Duration
	handovers  []time.Duration
}

// TestChaos rolls out template bumps from Git through Flux and the chaos
// build of the binary, one after the other over several StatefulSets, each
// under a fault: the controller SIGKILLed at each convergence step (by its
// crash points) and at a random moment, then restarted; kube-apiserver and
// etcd restarted mid-rollout; two replicas with leader election and the
// leader SIGKILLed mid-convergence; a burst of commits, each pushed as the
// StatefulSet was re-created for the one before. Every rollout must finish
// (Flux applied the commit, every claim at the size, success on the commit), and the
// invariant recorder, watching from the start, must find nothing: no claim
// lowered or deleted, no Pod restarted, no revision lost, no StatefulSet
// missing, no claim patched twice, one final status per commit.
func TestChaos(t *testing.T) {
	cl := started(t)
	ctx := context.Background()
	bin, err := controllerproc.ChaosBinaryPath()
	if err != nil {
		t.Fatal(err)
	}
	seed := *chaosSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	if *chaosBurst < 2 {
		t.Fatalf("-chaos.burst=%d: a burst needs at least 2 commits, one to supersede", *chaosBurst)
	}
	t.Logf("chaos: %d rollouts over %d StatefulSets, seed %d (-chaos.seed to repeat)", *chaosRollouts, *chaosSets, seed)
	rnd := rand.New(rand.NewPCG(seed, seed))
	startFlux(t)
	g := startGitea(t)
	pool := &chaosPool{t: t, cl: cl, binary: bin,
		args: []string{"--flux", "--flux-artifact-cache-dir", t.TempDir(), "--config", giteaConfig(t, cl, g.URL, g.Token, "gitea-token")}}
	ctl := pool.single("")

	var sets []*chaosSet
	var namespaces []string
	for i := range *chaosSets {
		s := setUpChaosSet(ctx, t, cl, g, fmt.Sprintf("chaos-%d", i))
		sets, namespaces = append(sets, s), append(namespaces, s.sts.Namespace)
	}
	for _, s := range sets {
		s.waitDone(t, ctl)
	}
	rec, err := invariants.Start(ctx, env.Config, invariants.Options{Namespaces: namespaces})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()

	stats := chaosStats{recovery: map[fault][]time.Duration{}}
	began := time.Now()
	for i := range *chaosRollouts {
		s, f := sets[i%len(sets)], chaosFaults[i%len(chaosFaults)]
		took := rollOutUnder(ctx, t, pool, s, f, rnd, &stats)
		stats.rollouts++
		if took >= 0 {
			stats.recovery[f] = append(stats.recovery[f], took)
		}
		t.Logf("rollout %d: %s to %s under %q: done %s after the fault", i+1, s.sts, s.size.String(), f, took.Round(time.Millisecond))
		if vs := rec.Violations(); len(vs) > 0 {
			t.Fatalf("after rollout %d: %v", i+1, &invariants.Error{Violations: vs})
		}
	}
	pool.stopAll()

	for _, s := range sets {
		for _, sha := range s.shas {
			statuses, err := g.Statuses(ctx, s.repo, sha)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range statuses {
				rec.CommitStatus(sha, st.Context, st.State)
			}
			// Who said what, for a violation's story.
			t.Logf("commit %.8s: %s", sha, states(statuses))
		}
	}
	err = rec.Check(ctx)
	stats.report(t, pool, rec.Counts(), time.Since(began), err)
	if err != nil {
		t.Fatal(err)
	}
	if stats.missedCrashpoints > stats.crashpoints {
		t.Errorf("the crash points were missed %d times and reached %d: the run did not test the steps", stats.missedCrashpoints, stats.crashpoints)
	}
}

// rollOutUnder bumps s under f and returns how long after the fault the
// rollout was done; -1 when the fault did not happen (a crash point the
// rollout did not reach).
func rollOutUnder(ctx context.Context, t *testing.T, pool *chaosPool, s *chaosSet, f fault, rnd *rand.Rand, stats *chaosStats) time.Duration {
	t.Helper()
	switch step, crash := crashSteps[f]; {
	case crash:
		c := pool.single(step)
		s.bump(ctx, t)
		select {
		case <-c.Done():
		case <-s.doneCh(t):
			// Flux re-created the StatefulSet before claimwarden could (its own
			// retry), so this rollout never reached the step.
			stats.missedCrashpoints++
			t.Logf("%s: the rollout finished without reaching %s", s.sts, step)
			return -1
		case <-time.After(3 * time.Minute):
			// A stalled rollout fails here, named, rather than at the
			// binary's timeout (it once waited 21 minutes on an adoption).
			t.Fatalf("%s: the rollout neither reached %s nor finished within 3m; see %s", s.sts, step, c.Name())
		}
		at := time.Now()
		if !c.logContains("crashpoint: SIGKILL at " + string(step)) {
			t.Fatalf("%s exited, but not at crash point %s:\n%v", c.Name(), step, c.Exited())
		}
		stats.crashpoints++
		s.waitDone(t, pool.crashed(c))
		return time.Since(at)
	case f == randomKill:
		c := pool.single("")
		s.bump(ctx, t)
		// The fault's moment, not a wait for anything: within the first
		// 6 s a rollout of two claims converges and patches.
		time.Sleep(time.Duration(rnd.Int64N(int64(6 * time.Second))))
		at := time.Now()
		s.waitDone(t, pool.kill(c, true))
		return time.Since(at)
	case f == apiserverRestart || f == etcdRestart:
		c := pool.single("")
		s.bump(ctx, t)
		time.Sleep(time.Duration(rnd.Int64N(int64(3 * time.Second)))) // the fault's moment
		at := time.Now()
		restart, count := env.RestartAPIServer, &stats.apiRestarts
		if f == etcdRestart {
			restart, count = env.RestartEtcd, &stats.etcdRestarts
		}
		down, err := restart(ctx)
		if err != nil {
			t.Fatal(err)
		}
		noteAPIOutage(at, at.Add(down))
		*count++
		t.Logf("%s: the API was back %s after the restart began", f, down.Round(time.Millisecond))
		s.waitDone(t, c)
		return time.Since(at)
	case f == superseding:
		c := pool.single("")
		s.supersedeBurst(ctx, t, c)
		stats.superseded += *chaosBurst - 1
		at := time.Now()
		s.waitDone(t, c)
		return time.Since(at)
	case f == leaderKill:
		leader, standby, leaderID := pool.pair(ctx)
		before := s.uid(ctx, t)
		s.bump(ctx, t)
		waitFor(t, "the leader to converge "+s.sts.String(), []*controller{leader, standby}, func(ctx context.Context) (bool, error) {
			now := &appsv1.StatefulSet{}
			err := s.cl.admin.Get(ctx, s.sts, now)
			// Gone (orphan-deleted) or re-created: mid-convergence.
			return err != nil || now.UID != before, nil
		})
		at := time.Now()
		pool.kill(leader, false)
		waitFor(t, "the standby to take the Lease", []*controller{standby}, func(ctx context.Context) (bool, error) {
			h := pool.holder(ctx)
			return h != "" && h != leaderID, nil
		})
		stats.handovers = append(stats.handovers, time.Since(at))
		s.waitDone(t, standby)
		return time.Since(at)
	}
	t.Fatalf("unknown fault %q", f)
	return 0
}

// doneCh is closed once s's last commit is through (done); it stops
// looking when the test ends.
func (s *chaosSet) doneCh(t *testing.T) <-chan struct{} {
	ch := make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	go func() {
		defer cancel()
		for ctx.Err() == nil {
			if ok, _ := s.done(ctx); ok {
				close(ch)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return ch
}

func (st *chaosStats) report(t *testing.T, pool *chaosPool, counts invariants.Counts, took time.Duration, checked error) {
	var b strings.Builder
	fmt.Fprintf(&b, "chaos summary (%s):\n", took.Round(time.Second))
	fmt.Fprintf(&b, "  rollouts %d; controller SIGKILLs %d (crash points reached %d, missed %d), restarts %d; kube-apiserver restarts %d; etcd restarts %d\n",
		st.rollouts, pool.kills, st.crashpoints, st.missedCrashpoints, pool.restarts, st.apiRestarts, st.etcdRestarts)
	for _, f := range chaosFaults {
		if d := st.recovery[f]; len(d) > 0 {
			fmt.Fprintf(&b, "  done after %-34q p50 %s max %s (n=%d)\n", f, pct(d, 50), pct(d, 100), len(d))
		}
	}
	if st.superseded > 0 {
		fmt.Fprintf(&b, "  commits superseded mid-convergence, each as the StatefulSet was re-created for the one before: %d (bursts of %d)\n", st.superseded, *chaosBurst)
	}
	if len(st.handovers) > 0 {
		fmt.Fprintf(&b, "  leader handover (SIGKILL to the standby holding the Lease): p50 %s max %s (n=%d)\n", pct(st.handovers, 50), pct(st.handovers, 100), len(st.handovers))
	}
	fmt.Fprintf(&b, "  recorder: %d claim writes (%d by claimwarden), %d Pod, %d StatefulSet, %d ControllerRevision events\n",
		counts.ClaimWrites, counts.ClaimwardenPatches, counts.PodEvents, counts.SetEvents, counts.RevisionEvents)
	var ie *invariants.Error
	switch {
	case errors.As(checked, &ie):
		fmt.Fprintf(&b, "  violations %d: %v", len(ie.Violations), ie)
	case checked != nil:
		fmt.Fprintf(&b, "  violations: not known (%v)", checked)
	default:
		b.WriteString("  violations 0")
	}
	t.Log(b.String())
}

// pct is the p-th percentile of d (nearest rank).
func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	i := max(0, (p*len(s)+99)/100-1)
	return s[min(i, len(s)-1)].Round(time.Millisecond)
}
