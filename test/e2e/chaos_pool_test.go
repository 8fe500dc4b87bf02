//go:build chaos

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"

	"github.com/claimwarden/claimwarden/reconciler/crashpoint"
)

// chaosPool runs the chaos run's controllers: one process without leader
// election (a restart then takes over at once, so what is measured is
// claimwarden's recovery, not a Lease), or, for a leader handover, two with
// it. All run the chaos build (bin/claimwarden-chaos).
type chaosPool struct {
	t      *testing.T
	cl     *cluster
	binary string
	args   []string
	n      int
	procs  []*controller
	// kills and restarts count SIGKILLs (by the pool or a crash point) and
	// the processes started after one.
	kills, restarts int
}

// single replaces whatever runs by one process, crashing at crashAt ("" for
// none).
func (p *chaosPool) single(crashAt crashpoint.Step) *controller {
	p.t.Helper()
	p.stopAll()
	var env []string
	if crashAt != "" {
		env = []string{"CHAOS_CRASH_AT=" + string(crashAt)}
	}
	return p.launch(false, env)
}

// pair replaces whatever runs by a leader and a standby, and returns them
// once the first holds the Lease.
func (p *chaosPool) pair(ctx context.Context) (leader, standby *controller, leaderID string) {
	p.t.Helper()
	p.stopAll()
	leader = p.launch(true, nil)
	waitFor(p.t, "the leader to hold the Lease", []*controller{leader}, func(ctx context.Context) (bool, error) {
		if !leader.logContains("Successfully acquired lease") {
			return false, nil
		}
		leaderID = p.holder(ctx)
		return leaderID != "", nil
	})
	return leader, p.launch(true, nil), leaderID
}

func (p *chaosPool) launch(leaderElection bool, env []string) *controller {
	p.t.Helper()
	p.n++
	c := launch(p.t, p.cl, fmt.Sprintf("chaos-%d", p.n), launchOptions{binary: p.binary, leaderElection: leaderElection, env: env, args: p.args})
	p.procs = append(p.procs, c)
	return c
}

// kill SIGKILLs c and starts another single process in its place (unless
// a standby is there to take over: replace false).
func (p *chaosPool) kill(c *controller, replace bool) *controller {
	p.t.Helper()
	c.kill(p.t)
	p.kills++
	p.forget(c)
	if !replace {
		return nil
	}
	p.restarts++
	return p.launch(false, nil)
}

// crashed records that c killed itself at a crash point and starts its
// replacement.
func (p *chaosPool) crashed(c *controller) *controller {
	p.t.Helper()
	p.kills++
	p.forget(c)
	p.restarts++
	return p.launch(false, nil)
}

func (p *chaosPool) forget(c *controller) {
	for i, q := range p.procs {
		if q == c {
			p.procs = append(p.procs[:i], p.procs[i+1:]...)
			return
		}
	}
}

// stopAll stops every process with SIGTERM, as a rolling update does.
func (p *chaosPool) stopAll() {
	for _, c := range p.procs {
		c.terminate(p.t, 30*time.Second)
	}
	p.procs = nil
}

// holder is the Lease's holder now ("" when none or unreadable).
func (p *chaosPool) holder(ctx context.Context) string {
	var lease coordinationv1.Lease
	if err := p.cl.admin.Get(ctx, leaseKey, &lease); err != nil {
		return ""
	}
	return ptr.Deref(lease.Spec.HolderIdentity, "")
}
