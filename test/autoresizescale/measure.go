package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/procfs"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/benchkit"
	"github.com/claimwarden/claimwarden/test/storagesim"
)

// filledTo is how much a filling claim holds: 88% of claimSize, past the
// shipped policy's 80%.
const filledTo = "900Mi"

// sample is the counters at one moment.
type sample struct {
	at      time.Time
	rounds  float64
	git     counts
	queries float64
	// apiGets and apiWrites are the controller's requests to the API
	// server (client-go's rest_client_requests_total): reads that
	// bypass its cache, and writes.
	apiGets, apiWrites float64
	cpu                float64
}

// window is what happened between two samples.
type window struct {
	rounds             float64
	seconds            float64
	git                counts
	queries            float64
	apiGets, apiWrites float64
	cpu                float64
}

func (s sample) since(o sample) window {
	return window{rounds: s.rounds - o.rounds, seconds: s.at.Sub(o.at).Seconds(), git: s.git.minus(o.git), queries: s.queries - o.queries,
		apiGets: s.apiGets - o.apiGets, apiWrites: s.apiWrites - o.apiWrites, cpu: s.cpu - o.cpu}
}

// measure waits for the first rounds over the fleet, measures -rest-rounds
// rounds at rest, then fills a share of the claims and measures until each
// of their StatefulSets has its pull request.
func (b *bench) measure(ctx context.Context) (*report, error) {
	rep := &report{}
	b.logf("waiting for autoresize to check every StatefulSet")
	if err := b.waitChecked(ctx); err != nil {
		return nil, err
	}
	// The round under way when every status was written may have begun
	// before: the rest starts with the next one.
	start, err := b.sample(ctx)
	if err != nil {
		return nil, err
	}
	if start, err = b.waitRounds(ctx, start.rounds+1); err != nil {
		return nil, err
	}
	b.logf("at rest: measuring %d rounds", b.o.restRounds)
	rested, err := b.waitRounds(ctx, start.rounds+float64(b.o.restRounds))
	if err != nil {
		return nil, err
	}
	rep.rest = rested.since(start)

	filling := b.filling()
	b.logf("filling the first claim of %d StatefulSets to %s", len(filling), filledTo)
	filled := map[types.NamespacedName]time.Time{}
	for _, m := range filling {
		pvc := &corev1.PersistentVolumeClaim{}
		key := types.NamespacedName{Namespace: m.key.Namespace, Name: "data-" + m.key.Name + "-0"}
		if err := b.c.Get(ctx, key, pvc); err != nil {
			return nil, err
		}
		patch := client.MergeFrom(pvc.DeepCopy())
		if pvc.Annotations == nil {
			pvc.Annotations = map[string]string{}
		}
		pvc.Annotations[storagesim.UsedAnnotation] = filledTo
		if err := b.c.Patch(ctx, pvc, patch); err != nil {
			return nil, err
		}
		filled[m.key] = time.Now()
	}
	before, err := b.sample(ctx)
	if err != nil {
		return nil, err
	}
	opened, err := b.waitPullRequests(ctx, filling)
	if err != nil {
		return nil, err
	}
	after, err := b.sample(ctx)
	if err != nil {
		return nil, err
	}
	rep.proposing = after.since(before)
	for key, at := range opened {
		rep.toPullRequest = append(rep.toPullRequest, at.Sub(filled[key]))
	}
	slices.Sort(rep.toPullRequest)
	rep.pullRequests = len(opened)
	rep.filling = len(filling)
	// Still full, their pull requests open: every round asks after each
	// (the round's listing) and finds it proposes the change already.
	if start, err = b.waitRounds(ctx, after.rounds+1); err != nil {
		return nil, err
	}
	b.logf("pull requests open: measuring %d rounds", b.o.restRounds)
	open, err := b.waitRounds(ctx, start.rounds+float64(b.o.restRounds))
	if err != nil {
		return nil, err
	}
	rep.open = open.since(start)
	mem, err := benchkit.ReadMemory(b.ctl.Pid())
	if err != nil {
		return nil, err
	}
	rep.peakRSSKiB = mem.HWMKiB
	return rep, nil
}

// filling are every (100/-filling)th StatefulSet of the fleet.
func (b *bench) filling() []member {
	n := b.o.statefulSets * b.o.fillingPercent / 100
	var out []member
	for i := range n {
		out = append(out, b.fleet[i*len(b.fleet)/n])
	}
	return out
}

// waitChecked waits until autoresize wrote the status of every
// StatefulSet's rollout.
func (b *bench) waitChecked(ctx context.Context) error {
	return benchkit.Poll(ctx, b.ctl, 5*time.Second, "every StatefulSet checked", func(ctx context.Context) (bool, error) {
		var list v1alpha1.VolumeClaimRolloutList
		if err := b.c.List(ctx, &list); err != nil {
			return false, err
		}
		checked := 0
		for _, v := range list.Items {
			if a := v.Status.Autoresize; a != nil && strings.HasPrefix(a.Message, "no claim needs to grow") {
				checked++
			}
		}
		b.progress("%d/%d StatefulSets checked at rest", checked, b.o.statefulSets)
		return checked == b.o.statefulSets, nil
	})
}

// waitRounds waits until autoresize counted rounds rounds, and samples.
func (b *bench) waitRounds(ctx context.Context, rounds float64) (sample, error) {
	var s sample
	err := benchkit.Poll(ctx, b.ctl, 200*time.Millisecond, fmt.Sprintf("%.0f autoresize rounds", rounds), func(ctx context.Context) (bool, error) {
		var err error
		s, err = b.sample(ctx)
		return err == nil && s.rounds >= rounds, err
	})
	return s, err
}

// waitPullRequests waits until each of the filling StatefulSets has its
// pull request, and says when each was first seen (read from Gitea
// directly, not through the counting proxy, every second).
func (b *bench) waitPullRequests(ctx context.Context, filling []member) (map[types.NamespacedName]time.Time, error) {
	want := map[string]types.NamespacedName{}
	repos := map[string]bool{}
	for _, m := range filling {
		want["claimwarden/autoresize/"+m.key.Namespace+"/"+m.key.Name] = m.key
		repos[m.repo] = true
	}
	seen := map[types.NamespacedName]time.Time{}
	ctx, cancel := context.WithTimeout(ctx, 20*b.o.interval+5*time.Minute)
	defer cancel()
	err := benchkit.Poll(ctx, b.ctl, time.Second, "a pull request per filling StatefulSet", func(ctx context.Context) (bool, error) {
		for repo := range repos {
			for page := 1; ; page++ {
				var prs []struct {
					Head struct {
						Ref string `json:"ref"`
					} `json:"head"`
				}
				path := fmt.Sprintf("/repos/%s/%s/pulls?state=all&limit=50&page=%d", b.git.User, repo, page)
				if err := b.git.API(ctx, "GET", path, nil, &prs); err != nil {
					return false, err
				}
				for _, pr := range prs {
					if key, ok := want[pr.Head.Ref]; ok && seen[key].IsZero() {
						seen[key] = time.Now()
					}
				}
				if len(prs) < 50 {
					break
				}
			}
		}
		b.progress("%d/%d pull requests opened", len(seen), len(filling))
		return len(seen) == len(filling), nil
	})
	return seen, err
}

// sample reads the counters now: autoresize's rounds, the Git host's
// requests, Prometheus's queries and the controller's CPU seconds.
func (b *bench) sample(ctx context.Context) (sample, error) {
	s := sample{at: time.Now(), git: b.proxy.counts()}
	fams, err := benchkit.Scrape(ctx, "http://"+b.ctl.MetricsAddr+"/metrics")
	if err != nil {
		return s, err
	}
	s.rounds = benchkit.Sum(fams["claimwarden_autoresize_checks_total"], nil)
	requests := fams["rest_client_requests_total"]
	s.apiGets = benchkit.Sum(requests, func(m *dto.Metric) bool { return benchkit.Label(m, "method") == "GET" })
	s.apiWrites = benchkit.Sum(requests, func(m *dto.Metric) bool {
		method := benchkit.Label(m, "method")
		return method != "GET" && method != "WATCH" && method != "LIST"
	})
	prom, err := benchkit.Scrape(ctx, b.prom.URL+"/metrics")
	if err != nil {
		return s, err
	}
	s.queries = benchkit.Sum(prom["prometheus_http_requests_total"], func(m *dto.Metric) bool {
		return benchkit.Label(m, "handler") == "/api/v1/query"
	})
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return s, err
	}
	p, err := fs.Proc(b.ctl.Pid())
	if err != nil {
		return s, err
	}
	st, err := p.Stat()
	if err != nil {
		return s, err
	}
	s.cpu = st.CPUTime()
	return s, nil
}
