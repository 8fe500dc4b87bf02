package usage

import (
	"strings"
	"testing"
)

// A selector is PromQL label matchers, written back as it was meant;
// anything else is refused with where it went wrong.
func TestParseSelector(t *testing.T) {
	for in, want := range map[string]string{
		DefaultSelector: `job="kubelet", metrics_path="/metrics"`,
		` job = "kubelet" ,instance!~"tenant-.*" `: `job="kubelet", instance!~"tenant-.*"`,
		`cluster="eu", job=~"kubelet|nodes"`:       `cluster="eu", job=~"kubelet|nodes"`,
		`job="say \"hi\"\\"`:                       `job="say \"hi\"\\"`,
		`job!=""`:                                  `job!=""`,
	} {
		s, err := ParseSelector(in)
		if err != nil || s.String() != want {
			t.Errorf("%q: %q (%v), want %q", in, s, err, want)
		}
	}
	for in, want := range map[string]string{
		"":                                "is empty",
		" ":                               "is empty",
		`{job="kubelet"}`:                 "does not start with a label name",
		`job="kubelet",`:                  "a comma ends it",
		`job="kubelet" instance="x"`:      "want a comma",
		`job=kubelet`:                     "not a double-quoted string",
		`job="kubelet`:                    "not a double-quoted string",
		`job=="kubelet"`:                  "not a double-quoted string",
		`job>"kubelet"`:                   "want one of",
		`job=~"kube(let"`:                 "not a regular expression",
		`namespace="shop"`:                "the label namespace is claimwarden's",
		`__name__="kubelet_volume_stats"`: "not one stored series carry",
		`job="\q"`:                        "the value of job",
	} {
		if _, err := ParseSelector(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", in, err, want)
		}
	}
}

// The queries select the raw series of the selector and the namespace:
// no aggregation over series that could be anyone's.
func TestQueries(t *testing.T) {
	sel, err := ParseSelector(DefaultSelector)
	if err != nil {
		t.Fatal(err)
	}
	q := Queries([]string{"shop"}, sel, DefaultWindow)
	if got, want := q["capacity"], `kubelet_volume_stats_capacity_bytes{job="kubelet", metrics_path="/metrics", namespace="shop"}`; got != want {
		t.Errorf("capacity query %s, want %s", got, want)
	}
	if got, want := q["growth"], `deriv(kubelet_volume_stats_used_bytes{job="kubelet", metrics_path="/metrics", namespace="shop"}[6h])`; got != want {
		t.Errorf("growth query %s, want %s", got, want)
	}
	q = Queries([]string{"shop", "bank-2"}, sel, DefaultWindow)
	if got, want := q["used"], `kubelet_volume_stats_used_bytes{job="kubelet", metrics_path="/metrics", namespace=~"shop|bank-2"}`; got != want {
		t.Errorf("the used query of two namespaces %s, want %s", got, want)
	}
}

// A cluster's selector adds its label to the operator's matchers, leaving
// them as they were (each cluster builds its own from one parsed
// selector); without a label it is the operator's.
func TestSelectorInCluster(t *testing.T) {
	base, err := ParseSelector(`job="kubelet", metrics_path="/metrics"`)
	if err != nil {
		t.Fatal(err)
	}
	eu, us := base.InCluster("cluster", "eu"), base.InCluster("cluster", "us")
	if eu.String() != `job="kubelet", metrics_path="/metrics", cluster="eu"` || us.String() != `job="kubelet", metrics_path="/metrics", cluster="us"` {
		t.Errorf("eu %s, us %s: want each its own cluster", eu, us)
	}
	if base.String() != `job="kubelet", metrics_path="/metrics"` || base.InCluster("", "eu").String() != base.String() {
		t.Errorf("base %s after, without a label %s: want the operator's", base, base.InCluster("", "eu"))
	}
	if !eu.Names("cluster") || base.Names("cluster") {
		t.Errorf("Names(cluster): %v of eu, %v of the operator's; want true, false", eu.Names("cluster"), base.Names("cluster"))
	}
}
