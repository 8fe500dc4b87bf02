package usage

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/common/model"
)

// Bounds of a problem's text: its series and labels come from whoever
// publishes a series, and the text goes into a status.
const (
	maxSeriesShown     = 3
	maxOtherLabelNames = 2
	maxLabelValueChars = 64
)

// series is one series' figures: the samples of the volume statistics that
// carry the same labels (its name aside).
type series struct {
	labels model.Metric
	u      Usage
}

// group is every claim's usage from the answers of Queries, by namespace
// and claim. A claim is expected in one series: the kubelet of the node
// its volume is mounted on reports it once. Several series that agree
// count as one; several that disagree (a volume moving between nodes for
// a moment, or a series someone else publishes under the kubelet's
// labels) decide nothing, their Usage holding only the Problem. A series
// without a capacity now (only its growth over the window) is of a volume
// the kubelet no longer reports.
func group(answers map[string]model.Vector) map[string]map[string]Usage {
	type claimKey struct{ namespace, name string }
	byClaim := map[claimKey]map[model.Fingerprint]*series{}
	for key, vec := range answers {
		for _, s := range vec {
			labels := s.Metric.Clone()
			delete(labels, model.MetricNameLabel)
			claim := claimKey{string(labels["namespace"]), string(labels["persistentvolumeclaim"])}
			if claim.name == "" {
				continue
			}
			if byClaim[claim] == nil {
				byClaim[claim] = map[model.Fingerprint]*series{}
			}
			fp := labels.Fingerprint()
			if byClaim[claim][fp] == nil {
				byClaim[claim][fp] = &series{labels: labels}
			}
			set(&byClaim[claim][fp].u, key, float64(s.Value))
		}
	}
	out := map[string]map[string]Usage{}
	for claim, all := range byClaim {
		var reported []series
		for _, s := range all {
			if s.u.CapacityBytes > 0 {
				reported = append(reported, *s)
			}
		}
		if len(reported) == 0 {
			continue
		}
		if out[claim.namespace] == nil {
			out[claim.namespace] = map[string]Usage{}
		}
		slices.SortFunc(reported, func(a, b series) int { return strings.Compare(a.labels.String(), b.labels.String()) })
		if slices.ContainsFunc(reported, func(s series) bool { return s.u != reported[0].u }) {
			out[claim.namespace][claim.name] = Usage{Problem: disagreement(reported)}
			continue
		}
		out[claim.namespace][claim.name] = reported[0].u
	}
	return out
}

// disagreement says which series disagree, by the labels that tell them
// apart: job and instance, and a few others whose values differ. No
// figures: the text is the same at every check while the series are
// (a status that changes at each check is written at each).
func disagreement(all []series) string {
	names := []model.LabelName{"job", "instance"}
	var others []model.LabelName
	for name := range all[0].labels {
		if !slices.Contains(names, name) && slices.ContainsFunc(all, func(s series) bool { return s.labels[name] != all[0].labels[name] }) {
			others = append(others, name)
		}
	}
	for _, s := range all[1:] {
		for name := range s.labels {
			if _, ok := all[0].labels[name]; !ok && !slices.Contains(others, name) && !slices.Contains(names, name) {
				others = append(others, name)
			}
		}
	}
	slices.Sort(others)
	names = append(names, others[:min(len(others), maxOtherLabelNames)]...)
	shown := make([]string, 0, maxSeriesShown)
	for _, s := range all[:min(len(all), maxSeriesShown)] {
		var parts []string
		for _, name := range names {
			v := string(s.labels[name])
			if len(v) > maxLabelValueChars {
				v = v[:maxLabelValueChars] + "..."
			}
			parts = append(parts, fmt.Sprintf("%s=%q", name, v))
		}
		shown = append(shown, "{"+strings.Join(parts, ", ")+"}")
	}
	more := ""
	if len(all) > maxSeriesShown {
		more = fmt.Sprintf(" and %d more", len(all)-maxSeriesShown)
	}
	return fmt.Sprintf("%d series of the selector report it, with different figures: %s%s", len(all), strings.Join(shown, ", "), more)
}
