package autoresize

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
	"github.com/claimwarden/claimwarden/integrations/usage"
)

// The pull request says what grows, why, what it costs in quota and what
// the merge does; the emergency path says the claims grew already.
func TestRequestText(t *testing.T) {
	r := Request{
		StatefulSet: types.NamespacedName{Namespace: "shop", Name: "web"},
		Source:      v1alpha1.Source{Kind: "Kustomization", Namespace: "flux-system", Name: "shop"},
		Growths: []Growth{{Template: "data", From: resource.MustParse("10Gi"), To: resource.MustParse("13Gi"), Claims: []ClaimGrowth{{
			Name: "data-web-0", ToBytes: 13 * gi, Messages: []string{"claim data-web-0: 85% used"},
			Usage: usage.Usage{CapacityBytes: 10 * gi, UsedBytes: 85 * gi / 10, GrowthBytesPerSecond: float64(gi) / 86400},
		}}}},
		Growth:  map[string]int64{string(corev1.ResourceRequestsStorage): 6 * gi},
		Context: "claimwarden/shop/web",
	}
	if got := r.Title(); got != "Grow shop/web: data 10Gi → 13Gi (claimwarden autoresize)" {
		t.Errorf("title %q", got)
	}
	body := r.Body()
	for _, want := range []string{
		"| `data-web-0` | 8.5Gi (85%) | 10Gi | 1Gi/day | 36h | 13Gi |",
		"- claim data-web-0: 85% used",
		"`requests.storage` by 6Gi",
		"Kustomization flux-system/shop applies the new size",
		"`claimwarden/shop/web`",
		"grows each claim in place",
		"claimwarden restarts no Pod; whether the apply of the merge rolls them depends on what else the merge changes in the Pod template.",
		"**What the merge grows**: only volumeClaimTemplate `data` of StatefulSet `shop/web`",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the body does not say %q:\n%s", want, body)
		}
	}
	// A chart's Pod template labels change with its version: the tool's
	// apply may roll the Pods, which claimwarden cannot promise against.
	if strings.Contains(body, "no Pod restarts") {
		t.Errorf("the body promises no Pod restarts:\n%s", body)
	}
	if strings.Contains(body, "Grown now") {
		t.Errorf("the body says claims grew now, none did:\n%s", body)
	}
	if strings.Contains(body, "Chart version") {
		t.Errorf("the body says a chart version is bumped, none is:\n%s", body)
	}
	r.ChartBump = &ChartBump{ChartFile: "charts/web/Chart.yaml", From: "1.2.3", To: "1.2.4"}
	body = r.Body()
	for _, want := range []string{
		"**Chart version**: `charts/web/Chart.yaml` goes from 1.2.3 to 1.2.4. Kustomization flux-system/shop packages its chart anew only when the chart's version changes (`reconcileStrategy: ChartVersion`",
		"Kustomization flux-system/shop upgrades to chart version 1.2.4 with the new size",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the body does not say %q:\n%s", want, body)
		}
	}
	r.GrownNow = []string{"data-web-0"}
	if body := r.Body(); !strings.Contains(body, "**Grown now**: the claims `data-web-0`") {
		t.Errorf("the emergency is not said:\n%s", body)
	}
}

// While the pull request is open, claims larger than their template were
// grown before the merge, and the status says so.
func TestAheadText(t *testing.T) {
	s := shop("100Gi")
	open := &pullrequest.PullRequest{URL: "https://git.example.com/pr/1", State: pullrequest.Open}
	if got := aheadText(s.Live, s.Claims, open); got != "; pull request https://git.example.com/pr/1 is open" {
		t.Errorf("nothing ahead: %q", got)
	}
	s.Claims[2].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("13Gi")
	if got := aheadText(s.Live, s.Claims, open); got != "; data-web-0 grown before the merge of pull request https://git.example.com/pr/1 (emergency)" {
		t.Errorf("data-web-0 ahead: %q", got)
	}
	closedAt := time.Now()
	if got := aheadText(s.Live, s.Claims, &pullrequest.PullRequest{State: pullrequest.Closed, ClosedAt: closedAt}); got != "" {
		t.Errorf("closed: %q", got)
	}
}

// A spoke's pull request key names the spoke: one repository applying
// StatefulSets of one name to two clusters has two pull requests.
func TestKey(t *testing.T) {
	sts := types.NamespacedName{Namespace: "shop", Name: "db"}
	if got := Key("", sts); got != "autoresize/shop/db" {
		t.Errorf("in claimwarden's own cluster: %s, want autoresize/shop/db", got)
	}
	if got := Key("eu", sts); got != "autoresize/eu/shop/db" {
		t.Errorf("in spoke eu: %s, want autoresize/eu/shop/db", got)
	}
}
