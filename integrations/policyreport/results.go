package policyreport

import (
	"slices"
	"strings"
	"time"

	reportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// Source names claimwarden in every report and result: Policy Reporter
// groups and filters by it.
const Source = "claimwarden"

// Bounds of a namespace's report: results (a StatefulSet has one, or one
// per denying policy), their bytes as JSON, and the characters of a
// result's message. An
// object must stay well below the API server's size limit whatever a
// tenant's StatefulSets and a policy's messages say.
const (
	MaxResults     = 1000
	maxReportBytes = 1 << 20
	maxMessage     = 1024
	category       = "Volume claims"
	overallPolicy  = "claimwarden"
)

// The results claimwarden writes (OpenReports' Result enum, which its Go
// module names no constants of).
const (
	resultPass  reportsv1alpha1.Result = "pass"
	resultFail  reportsv1alpha1.Result = "fail"
	resultError reportsv1alpha1.Result = "error"
)

// resultsOf are the report results of one rollout outcome, at now: a
// fail per policy that denied its proposal (its messages), an error when
// the rollout is blocked otherwise, a pass when the policies allow it
// (done or under way alike). A Failure the outcome names no denials of (the
// proposer may not make the change) fails claimwarden's own check.
func resultsOf(o outcome.Outcome, now time.Time) []reportsv1alpha1.ReportResult {
	base := reportsv1alpha1.ReportResult{
		Source:    Source,
		Category:  category,
		Timestamp: metav1.Timestamp{Seconds: now.Unix()},
		Scored:    true,
		Subjects: []corev1.ObjectReference{{APIVersion: "apps/v1", Kind: "StatefulSet",
			Namespace: o.StatefulSet.Namespace, Name: o.StatefulSet.Name, UID: o.UID}},
		Properties: properties(o),
	}
	one := func(policy string, result reportsv1alpha1.Result, msg string) []reportsv1alpha1.ReportResult {
		r := base
		r.Policy, r.Result, r.Description = policy, result, outcome.Shorten(msg, maxMessage)
		return []reportsv1alpha1.ReportResult{r}
	}
	switch o.State {
	case outcome.Failure:
		if len(o.Denials) == 0 {
			return one(overallPolicy, resultFail, o.Message)
		}
		var out []reportsv1alpha1.ReportResult
		for _, policy := range policyOrder(o.Denials) {
			out = append(out, one(policy, resultFail, messagesOf(o.Denials, policy))...)
		}
		return out
	case outcome.Error:
		return one(overallPolicy, resultError, o.Message)
	}
	// Done or under way, the same words: the report says what the
	// policies decided, not how far the rollout got (which would be a
	// write per step, and one per restart).
	return one(overallPolicy, resultPass, "the policies allow the proposal")
}

// properties say where the proposal came from.
func properties(o outcome.Outcome) map[string]string {
	p := map[string]string{"source": o.Source.Kind + " " + o.Source.Namespace + "/" + o.Source.Name}
	if o.Source.Namespace == "" {
		p["source"] = o.Source.Kind + " " + o.Source.Name
	}
	if o.Source.Revision != "" {
		p["revision"] = o.Source.Revision
	}
	return p
}

// policyOrder are the policies of denials, each once, in their order.
func policyOrder(denials []outcome.Denial) []string {
	var out []string
	for _, d := range denials {
		if !slices.Contains(out, d.Policy) {
			out = append(out, d.Policy)
		}
	}
	return out
}

// messagesOf are the messages of policy's denials, joined.
func messagesOf(denials []outcome.Denial, policy string) string {
	var msgs []string
	for _, d := range denials {
		if d.Policy == policy {
			msgs = append(msgs, d.Message)
		}
	}
	return strings.Join(msgs, "; ")
}

// sameResults reports whether a and b say the same, whenever they were
// found (Timestamp aside).
func sameResults(a, b []reportsv1alpha1.ReportResult) bool {
	return slices.EqualFunc(a, b, func(x, y reportsv1alpha1.ReportResult) bool {
		x.Timestamp, y.Timestamp = metav1.Timestamp{}, metav1.Timestamp{}
		return equality.Semantic.DeepEqual(x, y)
	})
}

// summaryOf counts results.
func summaryOf(results []reportsv1alpha1.ReportResult) reportsv1alpha1.ReportSummary {
	var s reportsv1alpha1.ReportSummary
	for _, r := range results {
		switch r.Result {
		case resultPass:
			s.Pass++
		case resultFail:
			s.Fail++
		case "warn":
			s.Warn++
		case resultError:
			s.Error++
		case "skip":
			s.Skip++
		}
	}
	return s
}
