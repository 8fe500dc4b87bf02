package usage

import (
	"strings"
	"testing"

	"github.com/prometheus/common/model"
)

// sample is one sample of metric for claim from the series labelled
// job and instance.
func sample(metric, claim, job, instance string, v float64) *model.Sample {
	m := model.Metric{"namespace": "shop", "persistentvolumeclaim": model.LabelValue(claim), "job": model.LabelValue(job), "instance": model.LabelValue(instance)}
	if metric != "" {
		m[model.MetricNameLabel] = model.LabelValue(metric)
	}
	return &model.Sample{Metric: m, Value: model.SampleValue(v)}
}

// answers are the five queries' answers for the series of (claim, job,
// instance) with capacity and used, the same growth and inodes each.
func answers(series ...[3]string) map[string]model.Vector {
	out := map[string]model.Vector{}
	for _, s := range series {
		capacity, used := 1000.0, 600.0
		if s[2] == "forged" {
			capacity, used = 1000, 1200
		}
		out["capacity"] = append(out["capacity"], sample("kubelet_volume_stats_capacity_bytes", s[0], s[1], s[2], capacity))
		out["used"] = append(out["used"], sample("kubelet_volume_stats_used_bytes", s[0], s[1], s[2], used))
		out["inodes"] = append(out["inodes"], sample("kubelet_volume_stats_inodes", s[0], s[1], s[2], 10))
		out["inodes_used"] = append(out["inodes_used"], sample("kubelet_volume_stats_inodes_used", s[0], s[1], s[2], 6))
		out["growth"] = append(out["growth"], sample("", s[0], s[1], s[2], 2))
	}
	return out
}

// One series per claim is its usage; several that agree count as one;
// several that disagree are a problem that names them and no figures.
// Claims are told apart by namespace too: a namesake in another namespace
// is another claim, not a second series of this one.
func TestGroup(t *testing.T) {
	a := answers(
		[3]string{"data-db-0", "kubelet", "node-a:10250"},
		[3]string{"data-db-1", "kubelet", "node-a:10250"},
		[3]string{"data-db-1", "kubelet", "node-b:10250"},
		[3]string{"data-db-2", "kubelet", "node-b:10250"},
		[3]string{"data-db-2", "kubelet", "forged"},
	)
	for key, v := range answers([3]string{"data-db-0", "kubelet", "forged"}) {
		for _, s := range v {
			s.Metric["namespace"] = "bank"
		}
		a[key] = append(a[key], v...)
	}
	all := group(a)
	got := all["shop"]
	if b := all["bank"]["data-db-0"]; b.Problem != "" || b.UsedBytes != 1200 {
		t.Errorf("bank's data-db-0 %+v, want its own series' figures", b)
	}
	want := Usage{CapacityBytes: 1000, UsedBytes: 600, Inodes: 10, InodesUsed: 6, GrowthBytesPerSecond: 2}
	if got["data-db-0"] != want {
		t.Errorf("one series: %+v, want %+v", got["data-db-0"], want)
	}
	if got["data-db-1"] != want {
		t.Errorf("two series that agree: %+v, want %+v", got["data-db-1"], want)
	}
	p := got["data-db-2"]
	wantProblem := `2 series of the selector report it, with different figures: {job="kubelet", instance="forged"}, {job="kubelet", instance="node-b:10250"}`
	if p.Problem != wantProblem || p.CapacityBytes != 0 || p.UsedBytes != 0 {
		t.Errorf("two series that disagree: %+v, want the problem %q and no figures", p, wantProblem)
	}
}

// A series with only a growth (a kubelet that reported the volume within
// the window, no longer) is not one of the claim's: no problem, and a
// claim only so reported has no usage.
func TestGroupSkipsSeriesWithoutCapacity(t *testing.T) {
	a := answers([3]string{"data-db-0", "kubelet", "node-b:10250"})
	a["growth"] = append(a["growth"], sample("", "data-db-0", "kubelet", "node-a:10250", 5), sample("", "data-db-9", "kubelet", "node-a:10250", 5))
	got := group(a)["shop"]
	if u := got["data-db-0"]; u.Problem != "" || u.GrowthBytesPerSecond != 2 {
		t.Errorf("data-db-0 %+v, want node-b's usage alone", u)
	}
	if u, ok := got["data-db-9"]; ok {
		t.Errorf("data-db-9, with a growth only: %+v, want no usage", u)
	}
}

// The problem's text is bounded: a few series and labels, values cut.
func TestDisagreementIsBounded(t *testing.T) {
	var all []series
	for i := range 10 {
		l := model.Metric{"job": "kubelet", "instance": model.LabelValue(strings.Repeat("x", 500)), "a": model.LabelValue(rune('a' + i)), "b": "1", "c": model.LabelValue(rune('a' + i)), "d": model.LabelValue(rune('a' + i))}
		all = append(all, series{labels: l, u: Usage{CapacityBytes: int64(i + 1)}})
	}
	got := disagreement(all)
	if len(got) > 700 || !strings.Contains(got, "and 7 more") || strings.Contains(got, `b="1"`) || strings.Contains(got, "d=") || !strings.Contains(got, `c="a"`) {
		t.Errorf("%d characters: %s", len(got), got)
	}
}

// A capacity is the claim's when it is at most 2% above its
// status.capacity (a file system is not larger than its volume) and at
// most 20% below (a file system's own structures).
func TestAgainst(t *testing.T) {
	const gi = 1 << 30
	for _, c := range []struct {
		u      Usage
		status int64
		want   string
	}{
		{Usage{CapacityBytes: gi - 50<<20, UsedBytes: gi / 2}, gi, ""}, // ext4's 1Gi
		{Usage{CapacityBytes: gi + gi/100, UsedBytes: gi / 2}, gi, ""}, // rounded up
		{Usage{CapacityBytes: gi * 100, UsedBytes: gi}, gi, "capacity of 100Gi, above the claim's status.capacity 1Gi by more than 2%"},
		{Usage{CapacityBytes: gi, UsedBytes: gi / 2}, 2 * gi, "capacity of 1Gi, below the claim's status.capacity 2Gi by more than 20%"},
		{Usage{CapacityBytes: gi, UsedBytes: gi + 1}, gi, "more used than their capacity of 1Gi"},
		{Usage{Problem: "2 series"}, gi, "2 series"},
	} {
		if got := c.u.Against(c.status); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%+v against %d: %q, want %q", c.u, c.status, got, c.want)
		}
	}
}
