// Package policyreport writes the rollouts' verdicts as OpenReports Reports
// (openreports.io/v1alpha1, as Kyverno 1.15+ and Policy Reporter read
// them): one Report per namespace, named claimwarden, with each managed
// StatefulSet's results, so that Policy Reporter's views and alerts show
// claimwarden's guardrails beside Kyverno's. It is an outcome.Sink: the
// rollout publishes every reconcile's outcome, the sink keeps each
// StatefulSet's results and writes a namespace's report only when what it
// says changes (nothing at rest, nothing after a restart that finds the
// report saying the same).
package policyreport

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	reportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// ReportName is the name of claimwarden's report in each namespace.
const ReportName = "claimwarden"

// Sink keeps each StatefulSet's results and writes them, a namespace's
// report at a time, from a work queue (Start): Publish never waits for
// the API server. A Runnable on the leader.
type Sink struct {
	// Client writes the reports and reads the VolumeClaimRollouts (from
	// the cache); Reader reads the reports (the API server: they are not
	// watched).
	Client client.Client
	Reader client.Reader
	Log    logr.Logger
	// Now is the clock of the results' timestamps (time.Now when nil).
	Now func() time.Time

	queue   workqueue.TypedRateLimitingInterface[string]
	mu      sync.Mutex
	results map[string]map[string][]reportsv1alpha1.ReportResult
	// gone are the StatefulSets forgotten, by namespace: never carried
	// from the report as written (carry), though their rollout may not
	// be deleted yet.
	gone map[string]map[string]bool
}

var _ outcome.Sink = (*Sink)(nil)
var _ manager.LeaderElectionRunnable = (*Sink)(nil)

// New returns a Sink writing with c and reading with r.
func New(c client.Client, r client.Reader, log logr.Logger) *Sink {
	return &Sink{Client: c, Reader: r, Log: log,
		queue:   workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](), workqueue.TypedRateLimitingQueueConfig[string]{Name: "policyreport"}),
		results: map[string]map[string][]reportsv1alpha1.ReportResult{}, gone: map[string]map[string]bool{}}
}

// Installed reports whether the API server serves OpenReports' Report.
func Installed(mapper meta.RESTMapper) bool {
	_, err := mapper.RESTMapping(reportsv1alpha1.SchemeGroupVersion.WithKind("Report").GroupKind(), reportsv1alpha1.SchemeGroupVersion.Version)
	return err == nil
}

func (s *Sink) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Publish implements outcome.Sink: a rollout's results, queued for its
// namespace's report when they say something new.
func (s *Sink) Publish(_ context.Context, o outcome.Outcome) {
	if o.Action != outcome.Reconciled {
		return
	}
	rs := resultsOf(o, s.now())
	ns, name := o.StatefulSet.Namespace, o.StatefulSet.Name
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.results[ns][name]; ok && sameResults(old, rs) {
		return
	}
	if s.results[ns] == nil {
		s.results[ns] = map[string][]reportsv1alpha1.ReportResult{}
	}
	s.results[ns][name] = rs
	delete(s.gone[ns], name)
	s.queue.Add(ns)
}

// Forget implements outcome.Sink: a StatefulSet gone, or no longer
// managed, leaves its namespace's report.
func (s *Sink) Forget(sts types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gone[sts.Namespace] == nil {
		s.gone[sts.Namespace] = map[string]bool{}
	}
	s.gone[sts.Namespace][sts.Name] = true
	delete(s.results[sts.Namespace], sts.Name)
	s.queue.Add(sts.Namespace)
}

// NeedLeaderElection is true: only the leader writes.
func (s *Sink) NeedLeaderElection() bool { return true }

// Start writes the queued namespaces' reports until ctx ends; a write
// that failed is tried again later and later (the queue's back-off).
func (s *Sink) Start(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		s.queue.ShutDown()
	}()
	for {
		ns, shutdown := s.queue.Get()
		if shutdown {
			return nil
		}
		if err := s.write(ctx, ns); err != nil {
			s.Log.Error(err, "writing the policy report", "namespace", ns)
			s.queue.AddRateLimited(ns)
		} else {
			s.queue.Forget(ns)
		}
		s.queue.Done(ns)
	}
}

// snapshot is what the sink knows of namespace ns at one moment: the
// results, by StatefulSet name then as resultsOf ordered them, and which
// StatefulSets it has results of, or forgot (carry).
type snapshot struct {
	results     []reportsv1alpha1.ReportResult
	known, gone map[string]bool
}

func (s *Sink) snapshot(ns string) snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := snapshot{known: map[string]bool{}, gone: maps.Clone(s.gone[ns])}
	byName := s.results[ns]
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		snap.results = append(snap.results, byName[name]...)
		snap.known[name] = true
	}
	return snap
}

// bounded is results, at most MaxResults and maxReportBytes of them as
// JSON (the first by StatefulSet name): the API server refuses an object
// much larger than a megabyte, and policy messages quote what tenants
// wrote.
func (s *Sink) bounded(ns string, results []reportsv1alpha1.ReportResult) []reportsv1alpha1.ReportResult {
	size := 0
	for i, r := range results {
		b, err := json.Marshal(r)
		if err == nil {
			size += len(b)
		}
		if i == MaxResults || err != nil || size > maxReportBytes {
			s.Log.Info("policy report truncated", "namespace", ns, "results", len(results), "kept", i, "maxResults", MaxResults, "maxBytes", maxReportBytes)
			return results[:i]
		}
	}
	return results
}

// write makes namespace ns's report say its results (report); once it
// does, the StatefulSets forgotten before are in it no more, and need not
// be remembered (gone would otherwise grow with every StatefulSet ever
// deleted).
func (s *Sink) write(ctx context.Context, ns string) error {
	snap := s.snapshot(ns)
	if err := s.report(ctx, ns, snap); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range snap.gone {
		delete(s.gone[ns], name)
	}
	if len(s.gone[ns]) == 0 {
		delete(s.gone, ns)
	}
	return nil
}

// report makes namespace ns's report say snap's results: created, updated,
// or left as it is when it says the same already (a restarted controller's
// first results keep the report's timestamps).
func (s *Sink) report(ctx context.Context, ns string, snap snapshot) error {
	results := snap.results
	var live reportsv1alpha1.Report
	err := s.Reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: ReportName}, &live)
	switch {
	case apierrors.IsNotFound(err):
		if len(results) == 0 {
			return nil
		}
		report := &reportsv1alpha1.Report{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ReportName,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "claimwarden"}}}
		fill(report, s.bounded(ns, results))
		if err := s.Client.Create(ctx, report); err != nil {
			return fmt.Errorf("creating Report %s/%s: %w", ns, ReportName, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("reading Report %s/%s: %w", ns, ReportName, err)
	}
	results = keepTimestamps(s.bounded(ns, s.carry(ctx, ns, snap, live.Results)), live.Results)
	if sameResults(results, live.Results) && live.Source == Source && live.Summary == summaryOf(results) {
		return nil
	}
	fill(&live, results)
	if err := s.Client.Update(ctx, &live); err != nil {
		return fmt.Errorf("updating Report %s/%s: %w", ns, ReportName, err)
	}
	return nil
}

// carry adds to results, from the report as written, those of the
// StatefulSets the sink has no results of, nor forgot, while their
// rollout exists (a VolumeClaimRollout of their name): a restarted controller publishes
// each StatefulSet's in turn, and a report written with only the first
// would drop the others until theirs come, a write for each. Results of
// a StatefulSet whose rollout is gone are dropped.
func (s *Sink) carry(ctx context.Context, ns string, snap snapshot, live []reportsv1alpha1.ReportResult) []reportsv1alpha1.ReportResult {
	results := snap.results
	carried := false
	for _, l := range live {
		name := subjectName(l)
		if name == "" || snap.known[name] || snap.gone[name] {
			continue
		}
		var vcr v1alpha1.VolumeClaimRollout
		if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &vcr); err != nil {
			continue
		}
		results = append(results, l)
		carried = true
	}
	if carried {
		slices.SortStableFunc(results, func(a, b reportsv1alpha1.ReportResult) int {
			return strings.Compare(subjectName(a), subjectName(b))
		})
	}
	return results
}

func subjectName(r reportsv1alpha1.ReportResult) string {
	if len(r.Subjects) == 0 {
		return ""
	}
	return r.Subjects[0].Name
}

// fill makes report say results.
func fill(report *reportsv1alpha1.Report, results []reportsv1alpha1.ReportResult) {
	report.Source = Source
	report.Results = results
	report.Summary = summaryOf(results)
	report.Configuration = &reportsv1alpha1.ReportConfiguration{Limits: reportsv1alpha1.Limits{MaxResults: MaxResults}}
}

// keepTimestamps gives each of results that says the same as one of
// live's (same StatefulSet and policy) live's timestamp: when it was
// first found, not when this controller last started.
func keepTimestamps(results, live []reportsv1alpha1.ReportResult) []reportsv1alpha1.ReportResult {
	type key struct{ subject, policy string }
	keyOf := func(r reportsv1alpha1.ReportResult) key {
		k := key{policy: r.Policy}
		if len(r.Subjects) > 0 {
			k.subject = r.Subjects[0].Name
		}
		return k
	}
	found := make(map[key]reportsv1alpha1.ReportResult, len(live))
	for _, l := range live {
		found[keyOf(l)] = l
	}
	out := slices.Clone(results)
	for i := range out {
		if l, ok := found[keyOf(out[i])]; ok && sameResults(out[i:i+1], []reportsv1alpha1.ReportResult{l}) {
			out[i].Timestamp = l.Timestamp
		}
	}
	return out
}
