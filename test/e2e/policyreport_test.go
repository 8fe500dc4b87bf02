package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	reportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/policyreport"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// The controller with policyReports on, as its ServiceAccount with
// config/components/policy-reports, where the OpenReports CRD is
// installed: an allowed and a denied rollout appear in their namespace's
// report, the denial with max-step's words; at rest, and across a
// restart, the report is not written (the audit log's writes to it are
// counted).
func TestPolicyReports(t *testing.T) {
	cl := started(t)
	ns := namespace(t, cl.admin)
	ctl := startController(t, cl, "controller", "--policy-reports")
	small, _ := readyAt1Gi(t, cl, ns, ctl)
	bump(t, cl, small)
	waitRolloutDone(t, cl.admin, client.ObjectKeyFromObject(small), 3, "2Gi", ctl)

	big := fixtures.StatefulSet(ns, "big", 1, class, "1Gi")
	createReady(t, cl.admin, big)
	waitRolloutDone(t, cl.admin, client.ObjectKeyFromObject(big), 1, "1Gi", ctl)
	if err := fixtures.ReplaceTemplates(context.Background(), cl.admin, client.ObjectKeyFromObject(big), fixtures.SetTemplateSize("8Gi")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "shop/big denied", []*controller{ctl}, func(ctx context.Context) (bool, error) {
		var vcr v1alpha1.VolumeClaimRollout
		if err := cl.admin.Get(ctx, client.ObjectKeyFromObject(big), &vcr); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return conditions.IsStalled(&vcr) && conditions.GetReason(&vcr, "Stalled") == v1alpha1.ReasonPolicyDenied, nil
	})

	var report reportsv1alpha1.Report
	waitFor(t, "the report of both", []*controller{ctl}, func(ctx context.Context) (bool, error) {
		if err := cl.admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: policyreport.ReportName}, &report); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return report.Summary.Pass == 1 && report.Summary.Fail == 1, nil
	})
	results := map[string]reportsv1alpha1.ReportResult{}
	for _, r := range report.Results {
		results[r.Subjects[0].Name] = r
	}
	if r := results["big"]; r.Policy != "max-step" || r.Result != "fail" || !strings.Contains(r.Description, "1Gi → 8Gi is +700%") {
		t.Errorf("big's result %+v, want max-step failing it with its words", r)
	}
	if r := results["web"]; r.Policy != "claimwarden" || r.Result != "pass" {
		t.Errorf("web's result %+v, want a pass", r)
	}

	// At rest, then after a restart that finds the report saying the same:
	// the restarted controller reconciles every rollout of the cluster once
	// at least (its first sync), publishing each.
	writes := func() []string {
		var out []string
		for _, ev := range claimwardenWrites(t, "reports", ns) {
			out = append(out, ev.Verb+" "+ev.ObjectRef.Name)
		}
		return out
	}
	before := writes()
	if len(before) == 0 {
		t.Fatal("the audit log holds no write of the report")
	}
	ctl.stop(t)
	var all v1alpha1.VolumeClaimRolloutList
	if err := cl.admin.List(context.Background(), &all); err != nil {
		t.Fatal(err)
	}
	ctl = startController(t, cl, "controller-restarted", "--policy-reports")
	waitFor(t, "the restarted controller's first sync", []*controller{ctl}, func(ctx context.Context) (bool, error) {
		n, err := reconciles(ctx, ctl)
		return n >= len(all.Items), err
	})
	settle := time.Now().Add(30 * time.Second)
	waitFor(t, "30 seconds at rest", []*controller{ctl}, func(context.Context) (bool, error) { return time.Now().After(settle), nil })
	if after := writes(); len(after) != len(before) {
		t.Errorf("the report was written at rest or across a restart: %v after %v", after[len(before):], before)
	}
}

// reconciles is how many reconciles of the rollout controller c counted,
// whatever their result.
func reconciles(ctx context.Context, c *controller) (int, error) {
	body, err := testenv.HTTPGet(ctx, http.DefaultClient, "http://"+c.MetricsAddr+"/metrics")
	if err != nil {
		return 0, err
	}
	n := 0.0
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, `controller_runtime_reconcile_total{controller="volumeclaimrollout",`) {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", line, err)
		}
		n += v
	}
	return int(n), nil
}
