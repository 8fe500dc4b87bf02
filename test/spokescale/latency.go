package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/benchkit"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/testenv"
)

const (
	// measuredLabel selects the StatefulSets claimwarden manages in the
	// run: the latency probes only.
	measuredLabel = "spokescale.claimwarden.dev/measured"
	// probeReplicas is the latency probe's replicas (and claims).
	probeReplicas = 2
)

// probeKey is the latency probe StatefulSet, the same on both clusters.
var probeKey = client.ObjectKey{Namespace: "latency", Name: "probe"}

// latencies are the first-step latencies of the rounds on the hub and on
// the spoke.
type latencies struct {
	Hub, Spoke []time.Duration
}

// measureLatency runs claimwarden with one simulated spoke and, rounds
// times on each cluster, grows the probe StatefulSet's claim template the
// way a user does (orphan delete, re-create) and waits for the rollout to
// finish. The figure is read afterwards from each cluster's audit log:
// from the re-create's answer to the arrival of claimwarden's first
// write to a claim, both the API server's own timestamps.
func (b *bench) measureLatency(ctx context.Context, rounds int) (l latencies, err error) {
	in, stop, err := b.startInstance(ctx, "latency", 1, b.o.selector)
	defer func() { err = errors.Join(err, stop()) }()
	if err != nil {
		return l, err
	}
	if _, err := in.waitSynced(ctx); err != nil {
		return l, err
	}
	both := []*cluster{b.hub, b.spoke}
	for _, cl := range both {
		if err := createProbe(ctx, cl); err != nil {
			return l, err
		}
	}
	for _, cl := range both {
		if err := waitConverged(ctx, in, cl, workloadSize); err != nil {
			return l, err
		}
	}
	for round := 1; round <= rounds; round++ {
		size := fmt.Sprintf("%dGi", round+1)
		// Each goes first in every other round, so a drift of the
		// machine's speed weighs on both alike.
		order := both
		if round%2 == 0 {
			order = []*cluster{b.spoke, b.hub}
		}
		for _, cl := range order {
			if err := fixtures.ReplaceTemplates(ctx, cl.c, probeKey, fixtures.SetTemplateSize(size)); err != nil {
				return l, fmt.Errorf("the %s's StatefulSet %s: %w", cl.name, probeKey, err)
			}
			if err := waitConverged(ctx, in, cl, size); err != nil {
				return l, err
			}
		}
		b.logf("  latency round %d/%d done (%s)", round, rounds, size)
	}
	for _, cl := range both {
		events, err := cl.env.AuditEvents(func(ev *auditv1.Event) bool {
			return ev.ObjectRef != nil && ev.ObjectRef.Namespace == probeKey.Namespace && testenv.IsWrite(ev)
		})
		if err != nil {
			return l, err
		}
		steps := firstSteps(events, accountUser)
		if len(steps) != rounds {
			return l, fmt.Errorf("the %s's audit log has %d re-creates followed by a claim write of claimwarden's, want %d", cl.name, len(steps), rounds)
		}
		if cl == b.hub {
			l.Hub = steps
		} else {
			l.Spoke = steps
		}
	}
	return l, nil
}

// createProbe creates the latency probe StatefulSet on cl, with the label
// that makes claimwarden manage it.
func createProbe(ctx context.Context, cl *cluster) error {
	if err := fixtures.Namespace(ctx, cl.c, probeKey.Namespace); err != nil {
		return fmt.Errorf("the %s's namespace %s: %w", cl.name, probeKey.Namespace, err)
	}
	sts := fixtures.StatefulSet(probeKey.Namespace, probeKey.Name, probeReplicas, storageClass, workloadSize)
	// A copy: the fixture's selector and template share the labels map.
	sts.Labels = maps.Clone(sts.Labels)
	sts.Labels[measuredLabel] = "true"
	if err := cl.c.Create(ctx, sts); err != nil {
		return fmt.Errorf("the %s's StatefulSet %s: %w", cl.name, probeKey, err)
	}
	return nil
}

// waitConverged waits until the probe's VolumeClaimRollout on cl is Ready
// with every claim Compatible at size.
func waitConverged(ctx context.Context, in *instance, cl *cluster, size string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var last string
	err := benchkit.Poll(ctx, in.proc, 250*time.Millisecond, "the "+cl.name+"'s rollout of "+probeKey.String()+" at "+size, func(ctx context.Context) (bool, error) {
		v := &v1alpha1.VolumeClaimRollout{}
		if err := cl.c.Get(ctx, probeKey, v); err != nil {
			last = err.Error()
			return false, client.IgnoreNotFound(err)
		}
		last = fmt.Sprintf("%+v", v.Status.Counts)
		return benchkit.Converged(v, size, probeReplicas), nil
	})
	if err != nil {
		return fmt.Errorf("%w (last: %s)", err, last)
	}
	return nil
}

// firstSteps pairs, in an audit log of one namespace's writes in the order
// answered, each re-create of a StatefulSet by someone other than user
// (every create but the first: that one is the StatefulSet's creation,
// not a change) with user's first write to a claim after it and before
// the next create, and returns the time from the create's answer to that
// write's arrival. A re-create with no such write is left out.
func firstSteps(events []auditv1.Event, user string) []time.Duration {
	var out []time.Duration
	var created time.Time
	creates, pending := 0, false
	for i := range events {
		ev := &events[i]
		switch {
		case ev.ObjectRef.Resource == "statefulsets" && ev.Verb == "create" && ev.User.Username != user:
			creates++
			created, pending = ev.StageTimestamp.Time, creates > 1
		case pending && ev.ObjectRef.Resource == "persistentvolumeclaims" && (ev.Verb == "patch" || ev.Verb == "update") && ev.User.Username == user:
			out = append(out, ev.RequestReceivedTimestamp.Sub(created))
			pending = false
		}
	}
	return out
}
