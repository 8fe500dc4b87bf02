package e2e

import (
	"context"
	"flag"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/faultproxy"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// stormLength is how long TestGitHostStorm's Git host refuses statuses:
// short in `make test`, minutes in `make chaos-storm`.
var stormLength = flag.Duration("storm", 30*time.Second, "how long TestGitHostStorm's Git host answers 5xx and 429")

const (
	// stormRetryAfter is what the storm's Retry-After answers say.
	stormRetryAfter = 3 * time.Second
	// stormHeapGrowth bounds the controller's heap growth during the storm:
	// the reporter keeps one slot per commit and context, however many
	// times it is refused, so the heap must not grow with the storm.
	stormHeapGrowth = 64 << 20
	// maxBackoff is the reporter's default MaxDelay: after a storm, a
	// status waits at most that long (or as long as it has failed) for its
	// next attempt.
	maxBackoff = 5 * time.Minute
)

// TestGitHostStorm puts the real Gitea behind a proxy that answers every
// status post of the test's repository with 5xx and 429 (Retry-After in
// seconds and as a date, on 429 and 503) for -storm, while three
// StatefulSets go through rounds of commits: allowed (success), denied by
// max-step (failure) and superseded mid-rollout (error, then success on
// the newer commit). Every rollout must converge while the storm lasts
// (reconciles do not wait for the Git host); afterwards every commit must
// show exactly one final status, the right one, with no status posted twice
// in a row (read from Gitea's list of every status); no post may come
// within a Retry-After; the commit-status backlog, the heap and the rollout
// queue stay bounded and the backlog drains.
func TestGitHostStorm(t *testing.T) {
	cl := started(t)
	ctx := context.Background()
	g := startGitea(t)
	const repo = "storm"
	if _, err := g.CreateRepo(ctx, repo); err != nil {
		t.Fatal(err)
	}
	proxy, err := faultproxy.New(g.URL, faultproxy.StatusPosts(g.User+"/"+repo))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	ns := namespace(t, cl.admin)
	ctl := startController(t, cl, "controller", "--config", giteaConfig(t, cl, proxy.URL, g.Token, "storm-token", g.URL))
	r := &stormRun{t: t, cl: cl, g: g, repo: repo, ctl: ctl, final: map[string]string{}}

	// Calm first: each StatefulSet at 4Gi on a commit of its own, success.
	var sets []*stormSet
	for _, name := range []string{"alpha", "bravo", "charlie"} {
		sha, err := g.PushCommit(ctx, repo, map[string]string{name + ".yaml": "storage: 4Gi\n"}, name+" 4Gi")
		if err != nil {
			t.Fatal(err)
		}
		s := r.newStormSet(ns, name, sha)
		key := sha + " " + r.context(s)
		r.final[key], r.order = "success", append(r.order, key)
		sets = append(sets, s)
	}
	for i, s := range sets {
		waitStatus(t, g, repo, r.order[i][:40], r.context(s), "success", "2/2 claims compatible", ctl)
	}
	others, all := otherReportingSets(t, cl, ns)

	smp := startSampler(ctl)
	proxy.Storm(*stormLength, stormRetryAfter)
	stormEnd := proxy.StormUntil()
	var longest time.Duration
	rounds, rollouts := 0, 0
	for rounds == 0 || time.Until(stormEnd) > longest*3/2 {
		began := time.Now()
		shas := make([]string, len(sets))
		for i, s := range sets {
			shas[i] = r.start(s, (rounds+i)%stepKinds)
		}
		for i, s := range sets {
			r.wait(s, (rounds+i)%stepKinds, shas[i])
		}
		took := time.Since(began)
		if time.Now().After(stormEnd) {
			t.Fatalf("round %d ended %v after the storm: the storm (-storm %v) did not cover it and proves nothing", rounds, time.Since(stormEnd).Round(time.Second), *stormLength)
		}
		t.Logf("round %d (%s, %s, %s) converged in %v during the storm", rounds,
			stepNames[rounds%stepKinds], stepNames[(rounds+1)%stepKinds], stepNames[(rounds+2)%stepKinds], took.Round(time.Millisecond))
		longest = max(longest, took)
		rounds++
		rollouts += len(sets)
	}
	for _, s := range sets {
		assertPodsKept(t, cl.admin, s.sts, s.pods)
	}

	// After the storm: the last attempt of a status may wait out the
	// backoff it built up (at most as long as the storm, or MaxDelay).
	recovery := min(*stormLength, maxBackoff) + time.Minute
	var read int
	var last error
	err = wait.PollUntilContextTimeout(ctx, fixtures.Poll, time.Until(stormEnd)+recovery, true, func(ctx context.Context) (bool, error) {
		if err := ctl.Exited(); err != nil {
			return false, err
		}
		n, err := r.checkFinal(ctx)
		if ctx.Err() == nil || last == nil {
			// A call cut by the deadline would hide what the checks saw.
			read, last = n, err
		}
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("final statuses %v after the storm: %v:\n%v", recovery, err, last)
	}
	lag := time.Since(stormEnd)
	waitFor(t, "the commit-status backlog to drain", []*controller{ctl}, func(ctx context.Context) (bool, error) {
		got, err := scrapeSample(ctx, "http://"+ctl.MetricsAddr+"/metrics")
		return err == nil && got.pending == 0, err
	})
	n, first, peak, _, err := smp.finish()
	if err != nil {
		t.Fatal(err)
	}

	st := proxy.Stats()
	if st.Refused[429] == 0 || st.Refused[503] == 0 || st.Refused[500] == 0 || st.WithRetryAfter == 0 {
		t.Errorf("refusals %v (%d with Retry-After): want 500, 503 and 429 among them, or the storm proves nothing", st.Refused, st.WithRetryAfter)
	}
	for _, at := range st.Early {
		t.Errorf("a status post came at %s, within a Retry-After (%v) the proxy had given", at.Format("15:04:05.000"), stormRetryAfter)
	}
	if bound := float64(len(r.order) + others); peak.pending > bound {
		t.Errorf("commit-status backlog peaked at %v, more than the %v commits that could have one outstanding", peak.pending, bound)
	}
	if peak.heapInuse > first.heapInuse+stormHeapGrowth {
		t.Errorf("heap in use grew from %.1f MiB to %.1f MiB during the storm, more than %d MiB", first.heapInuse/(1<<20), peak.heapInuse/(1<<20), stormHeapGrowth>>20)
	}
	if peak.queueDepth > float64(all) {
		t.Errorf("the rollout queue peaked at %v keys, more than the %d StatefulSets in the cluster", peak.queueDepth, all)
	}
	t.Logf("storm %v: %d rounds, %d rollouts, %d commits; refused %d %v (%d with Retry-After), early posts %d; forwarded %d posts, Gitea holds %d statuses; final statuses %v after the storm ended; %d samples: backlog peak %v, heap %.1f→%.1f MiB peak, rollout queue peak %v",
		*stormLength, rounds, rollouts, len(r.order), st.Total(), st.Refused, st.WithRetryAfter, len(st.Early),
		len(st.Forwarded), read, lag.Round(time.Millisecond), n, peak.pending, first.heapInuse/(1<<20), peak.heapInuse/(1<<20), peak.queueDepth)
}

// otherReportingSets counts the StatefulSets outside ns that name a
// repository (earlier tests' rollouts, whose statuses this controller posts
// and whose repositories this Gitea does not have), and all StatefulSets.
func otherReportingSets(t *testing.T, cl *cluster, ns string) (others, all int) {
	t.Helper()
	var list appsv1.StatefulSetList
	if err := cl.admin.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		if s.Namespace != ns && s.Annotations[v1alpha1.RepositoryAnnotation] != "" {
			others++
		}
	}
	return others, len(list.Items)
}
