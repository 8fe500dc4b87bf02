package policyreport

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	reportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// clock is a clock the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func reconciled(ns, name string, state outcome.State, msg string, denials ...outcome.Denial) outcome.Outcome {
	return outcome.Outcome{Action: outcome.Reconciled, StatefulSet: types.NamespacedName{Namespace: ns, Name: name}, UID: types.UID(name + "-uid"),
		Source: v1alpha1.Source{Kind: "Kustomization", Namespace: "flux-system", Name: "shop", Revision: "main@sha1:c0ffee"},
		State:  state, Message: msg, Denials: denials}
}

// On the real API server with the OpenReports CRD installed: a denied and
// an allowed rollout appear in their namespace's report with the policy's
// words and the StatefulSet as subject; at rest (five minutes of
// reconciles saying the same), and after a restart that finds the report
// saying it already, the report is not written; a StatefulSet forgotten
// leaves it; a namespace's report holds at most MaxResults.
func TestReportsOnTheAPIServer(t *testing.T) {
	crd, err := testenv.ModuleFile("github.com/openreports/reports-api", "config/crd/openreports.io_reports.yaml")
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.StartT(t, testenv.Options{CRDDirs: []string{crd, filepath.Join("..", "..", "config", "crd", "bases")}})
	c := testenv.Client(t, env.Config, reportsv1alpha1.Install, v1alpha1.AddToScheme)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, ns := range []string{"shop", "other", "many"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	hc, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	// Their rollouts: a restarted sink keeps their results until they are
	// published again.
	for _, name := range []string{"big", "small"} {
		if err := c.Create(ctx, &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	mapper, err := apiutil.NewDynamicRESTMapper(env.Config, hc)
	if err != nil {
		t.Fatal(err)
	}
	if !Installed(mapper) || Installed(meta.NewDefaultRESTMapper(nil)) {
		t.Fatal("Installed does not tell a server with the CRD from one without")
	}
	clk := &clock{now: time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)}
	start := func() (*Sink, context.CancelFunc) {
		s := New(c, c, logr.Discard())
		s.Now = clk.Now
		sctx, stop := context.WithCancel(ctx)
		go func() { _ = s.Start(sctx) }()
		return s, stop
	}
	report := func(ns string) *reportsv1alpha1.Report {
		t.Helper()
		var r reportsv1alpha1.Report
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			return c.Get(ctx, types.NamespacedName{Namespace: ns, Name: ReportName}, &r) == nil, nil
		})
		if err != nil {
			t.Fatalf("no Report %s/%s: %v", ns, ReportName, err)
		}
		return &r
	}
	// flushed waits for the sink to have written what was published
	// before: its one worker writes namespaces in the order queued, but a
	// namespace published again while it is being written is queued again
	// after whatever was queued meanwhile; so a marker in another
	// namespace is written twice, one after the other, and once the
	// second is, everything queued before the first was written.
	marker := 0
	flushed := func(s *Sink) {
		t.Helper()
		for range 2 {
			marker++
			name := fmt.Sprintf("marker-%d", marker)
			s.Publish(ctx, reconciled("other", name, outcome.Success, ""))
			err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				var r reportsv1alpha1.Report
				if err := c.Get(ctx, types.NamespacedName{Namespace: "other", Name: ReportName}, &r); err != nil {
					return false, nil
				}
				for _, res := range r.Results {
					if len(res.Subjects) > 0 && res.Subjects[0].Name == name {
						return true, nil
					}
				}
				return false, nil
			})
			if err != nil {
				t.Fatalf("the sink did not write the marker %s: %v", name, err)
			}
		}
	}

	sink, stop := start()
	maxStep := outcome.Denial{Policy: "max-step", Message: "claim data-big-0 (StatefulSet shop/big): 10Gi → 40Gi is +300%, more than max_step_percent 100"}
	denied := reconciled("shop", "big", outcome.Failure, "data-big-0: max-step: …", maxStep,
		outcome.Denial{Policy: "max-step", Message: "claim data-big-1 (StatefulSet shop/big): 10Gi → 40Gi is +300%, more than max_step_percent 100"})
	allowed := reconciled("shop", "small", outcome.Success, "every claim is compatible")
	sink.Publish(ctx, denied)
	sink.Publish(ctx, allowed)
	flushed(sink)
	r := report("shop")
	if r.Source != Source || r.Summary.Pass != 1 || r.Summary.Fail != 1 || len(r.Results) != 2 {
		t.Fatalf("report %+v, want claimwarden's, one pass and one fail", r)
	}
	big, small := r.Results[0], r.Results[1]
	if big.Policy != "max-step" || big.Result != "fail" || !strings.Contains(big.Description, "10Gi → 40Gi is +300%, more than max_step_percent 100") ||
		!strings.Contains(big.Description, "data-big-1") || big.Subjects[0].Kind != "StatefulSet" || big.Subjects[0].Name != "big" ||
		big.Properties["revision"] != "main@sha1:c0ffee" || big.Properties["source"] != "Kustomization flux-system/shop" {
		t.Errorf("shop/big's result %+v, want max-step failing it with its words, the StatefulSet its subject", big)
	}
	if small.Policy != "claimwarden" || small.Result != "pass" || small.Subjects[0].Name != "small" {
		t.Errorf("shop/small's result %+v, want a pass", small)
	}

	// At rest: five minutes of reconciles every 30 seconds say the same.
	written := r.ResourceVersion
	for range 10 {
		clk.add(30 * time.Second)
		sink.Publish(ctx, denied)
		sink.Publish(ctx, allowed)
	}
	flushed(sink)
	if rv := report("shop").ResourceVersion; rv != written {
		t.Errorf("the report was written at rest (resourceVersion %s, then %s)", written, rv)
	}

	// A restart: no memory, the same results, later; the report says them.
	stop()
	sink, stop = start()
	defer stop()
	clk.add(time.Hour)
	sink.Publish(ctx, denied)
	flushed(sink)
	sink.Publish(ctx, allowed)
	flushed(sink)
	if r := report("shop"); r.ResourceVersion != written || len(r.Results) != 2 {
		t.Errorf("the report was written after a restart that found it saying the same (resourceVersion %s, then %s; %d results)", written, r.ResourceVersion, len(r.Results))
	}

	// A blocked rollout is an error; a StatefulSet gone leaves.
	sink.Publish(ctx, reconciled("shop", "small", outcome.Error, "the API server refused the patch of data-small-0"))
	sink.Forget(types.NamespacedName{Namespace: "shop", Name: "big"})
	flushed(sink)
	if r := report("shop"); len(r.Results) != 1 || r.Results[0].Result != "error" || r.Summary.Error != 1 || r.Summary.Fail != 0 ||
		r.Results[0].Description != "the API server refused the patch of data-small-0" {
		t.Errorf("report %+v, want shop/small's error alone", r.Results)
	}
	sink.mu.Lock()
	if len(sink.gone) != 0 {
		t.Errorf("the StatefulSets forgotten are remembered after the report left them out: %v", sink.gone)
	}
	sink.mu.Unlock()

	// Bounded: a namespace with more StatefulSets than a report holds.
	for i := range MaxResults + 5 {
		sink.Publish(ctx, reconciled("many", fmt.Sprintf("sts-%04d", i), outcome.Success, ""))
	}
	flushed(sink)
	if r := report("many"); len(r.Results) != MaxResults || r.Configuration == nil || r.Configuration.Limits.MaxResults != MaxResults ||
		r.Results[MaxResults-1].Subjects[0].Name != fmt.Sprintf("sts-%04d", MaxResults-1) {
		t.Errorf("%d results (limit %+v), want the first %d by name", len(r.Results), r.Configuration, MaxResults)
	}
	// And in bytes: long messages of several denying policies each.
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "loud"}}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a message quoting a tenant's manifest ", 30)
	for i := range 400 {
		sink.Publish(ctx, reconciled("loud", fmt.Sprintf("sts-%04d", i), outcome.Failure, "",
			outcome.Denial{Policy: "max-step", Message: long}, outcome.Denial{Policy: "quota-fits", Message: long}, outcome.Denial{Policy: "org-note", Message: long}))
	}
	flushed(sink)
	loud := report("loud")
	if b, err := json.Marshal(loud); err != nil || len(loud.Results) == 0 || len(loud.Results) >= 1200 || len(b) > maxReportBytes+64<<10 {
		t.Errorf("%d results in %d bytes (%v), want as many as fit in about %d bytes", len(loud.Results), len(b), err, maxReportBytes)
	}
	if loud.Summary.Fail != len(loud.Results) {
		t.Errorf("summary %+v of %d results", loud.Summary, len(loud.Results))
	}
	var list reportsv1alpha1.ReportList
	if err := c.List(ctx, &list, client.InNamespace("shop")); err != nil || len(list.Items) != 1 {
		t.Errorf("reports in shop: %d (%v), want claimwarden's one", len(list.Items), err)
	}
}
