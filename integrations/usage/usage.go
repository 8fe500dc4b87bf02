// Package usage reads how full claims' volumes are from where clusters
// keep it: the kubelet's volume statistics (kubelet_volume_stats_*) in a
// Prometheus HTTP API (Prometheus, Thanos, Mimir, VictoriaMetrics...).
// Autoresize (issue 30) decides on it, so only the kubelet's series count
// (a Selector), one per claim, its capacity the claim's (Usage.Against):
// anyone may publish a series of the same name (issue 39).
package usage

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Usage is one claim's volume as the kubelet last reported it.
type Usage struct {
	// Problem says why the series read cannot be decided on (several
	// that disagree), the figures then zero; empty when they can.
	Problem string

	CapacityBytes, UsedBytes int64
	Inodes, InodesUsed       int64
	// GrowthBytesPerSecond is how fast UsedBytes grew over the window
	// (a least-squares slope, PromQL deriv); 0 when it did not.
	GrowthBytesPerSecond float64
}

// UsedFraction is used bytes over capacity (0 without a capacity).
func (u Usage) UsedFraction() float64 {
	if u.CapacityBytes <= 0 {
		return 0
	}
	return float64(u.UsedBytes) / float64(u.CapacityBytes)
}

// TimeToFull is when, growing as it did over the window, the volume is
// full; false when it is not growing.
func (u Usage) TimeToFull() (time.Duration, bool) {
	if u.GrowthBytesPerSecond <= 0 {
		return 0, false
	}
	free := float64(max(u.CapacityBytes-u.UsedBytes, 0))
	secs := free / u.GrowthBytesPerSecond
	if secs > float64(math.MaxInt64/int64(time.Second)) {
		return 0, false
	}
	return time.Duration(secs * float64(time.Second)), true
}

// DefaultWindow is how far back growth is measured.
const DefaultWindow = 6 * time.Hour

// Reader reads claims' usage from a Prometheus HTTP API.
type Reader struct {
	API v1.API
	// Window is how far back growth is measured; zero means DefaultWindow.
	Window time.Duration
	// Selector is what the series read must match besides their namespace
	// (ParseSelector); empty means DefaultSelector.
	Selector Selector
}

// MaxSeries bounds the series one query may answer: they are grouped in
// memory, and whoever can publish series under the selector's labels can
// publish many. A namespace past it is not read.
const MaxSeries = 10000

// namespaceName is what a Kubernetes namespace name may be (RFC 1123
// label): nothing else is put into a query.
var namespaceName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// Queries are the PromQL queries Namespaces asks, for the namespaces nss,
// the series selector sel and the growth window: every series, not
// aggregated, so that a claim reported by several series is seen (group).
// One namespace is matched by name, several by an alternation of their
// names (each a namespace name: no character a regular expression reads).
func Queries(nss []string, sel Selector, window time.Duration) map[string]string {
	m := fmt.Sprintf(`{%s, namespace=%q}`, sel, strings.Join(nss, ""))
	if len(nss) > 1 {
		m = fmt.Sprintf(`{%s, namespace=~%q}`, sel, strings.Join(nss, "|"))
	}
	return map[string]string{
		"capacity":    "kubelet_volume_stats_capacity_bytes" + m,
		"used":        "kubelet_volume_stats_used_bytes" + m,
		"inodes":      "kubelet_volume_stats_inodes" + m,
		"inodes_used": "kubelet_volume_stats_inodes_used" + m,
		"growth":      "deriv(kubelet_volume_stats_used_bytes" + m + "[" + model.Duration(window).String() + "])",
	}
}

// Claims is the usage of every claim of namespace ns the kubelets report,
// by claim name, as of at (Namespaces).
func (r Reader) Claims(ctx context.Context, ns string, at time.Time) (map[string]Usage, error) {
	all, err := r.Namespaces(ctx, []string{ns}, at)
	return all[ns], err
}

// Namespaces is the usage of every claim of the namespaces nss the
// kubelets report, by namespace and claim name, as of at: one query per
// figure for all of them, its series bounded by MaxSeries together; of
// the series of the selector only, a claim in several that disagree
// holding only a Problem (group). A namespace without claims reported
// has none.
func (r Reader) Namespaces(ctx context.Context, nss []string, at time.Time) (map[string]map[string]Usage, error) {
	if len(nss) == 0 {
		return nil, nil
	}
	for _, ns := range nss {
		if !namespaceName.MatchString(ns) {
			return nil, fmt.Errorf("usage: %q is not a namespace name", ns)
		}
	}
	window := r.Window
	if window <= 0 {
		window = DefaultWindow
	}
	sel := r.Selector
	if len(sel) == 0 {
		sel = defaultSelector
	}
	answers := map[string]model.Vector{}
	for key, q := range Queries(nss, sel, window) {
		v, _, _, err := r.API.Query(ctx, q, at, v1.WithLimit(MaxSeries+1))
		if err != nil {
			return nil, fmt.Errorf("usage: querying %s: %w", q, err)
		}
		vec, ok := v.(model.Vector)
		if !ok {
			return nil, fmt.Errorf("usage: %s answered a %s, not a vector", q, v.Type())
		}
		if len(vec) > MaxSeries {
			return nil, fmt.Errorf("usage: %s answered more than %d series: not read", q, MaxSeries)
		}
		answers[key] = vec
	}
	return group(answers), nil
}

var defaultSelector = must(ParseSelector(DefaultSelector))

func must(s Selector, err error) Selector {
	if err != nil {
		panic(err)
	}
	return s
}

func set(u *Usage, key string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	switch key {
	case "capacity":
		u.CapacityBytes = int64(v)
	case "used":
		u.UsedBytes = int64(v)
	case "inodes":
		u.Inodes = int64(v)
	case "inodes_used":
		u.InodesUsed = int64(v)
	case "growth":
		u.GrowthBytesPerSecond = max(v, 0)
	}
}
