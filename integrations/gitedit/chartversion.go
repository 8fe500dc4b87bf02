package gitedit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// BumpChartVersion returns src, a chart's Chart.yaml, with its version
// set to NextChartVersion of it, and the versions before and after. Only
// the version's scalar changes, as SetSize changes a size: Flux packages
// a chart in Git anew only when its version changes (reconcileStrategy
// ChartVersion), and a person bumps it so.
func BumpChartVersion(src []byte) (out []byte, from, to string, err error) {
	if len(src) > MaxFileBytes {
		return nil, "", "", fmt.Errorf("the chart's Chart.yaml has %d bytes, more than the %d edited", len(src), MaxFileBytes)
	}
	root, err := yaml.Parse(string(src))
	if err != nil {
		return nil, "", "", fmt.Errorf("reading Chart.yaml: %w", err)
	}
	n := valueOf(root.YNode(), "version")
	if n == nil || n.Kind != yaml.ScalarNode {
		return nil, "", "", errors.New("the chart's Chart.yaml sets no version")
	}
	to, err = NextChartVersion(n.Value)
	if err != nil {
		return nil, "", "", fmt.Errorf("the chart's Chart.yaml: %w", err)
	}
	if out, err = splice(src, n, to, root.YNode().Style&yaml.FlowStyle != 0); err != nil {
		return nil, "", "", fmt.Errorf("the chart's version in Chart.yaml: %w", err)
	}
	return out, n.Value, to, nil
}

// NextChartVersion is the version after v, a strict SemVer 2 version, one
// number up: the patch (1.2.3 → 1.2.4), or of a pre-release its last
// identifier when that is a number (1.2.3-rc.1 → 1.2.3-rc.2), as bumping
// the patch would release a version nobody released and leave the
// pre-release behind. A pre-release ending in a word (1.2.3-alpha) has no
// number to raise and is refused; build metadata is kept, as it orders
// nothing and says what only its author knows.
func NextChartVersion(v string) (string, error) {
	ver, err := semver.StrictNewVersion(v)
	if err != nil {
		return "", fmt.Errorf("version %q is not SemVer (MAJOR.MINOR.PATCH): %w", v, err)
	}
	next := ver.IncPatch()
	if pre := ver.Prerelease(); pre != "" {
		ids := strings.Split(pre, ".")
		last, err := strconv.ParseUint(ids[len(ids)-1], 10, 64)
		if err != nil {
			return "", fmt.Errorf("version %q is a pre-release that ends in no number to raise", v)
		}
		ids[len(ids)-1] = strconv.FormatUint(last+1, 10)
		if next, err = ver.SetPrerelease(strings.Join(ids, ".")); err != nil {
			return "", err
		}
	}
	if next, err = next.SetMetadata(ver.Metadata()); err != nil {
		return "", err
	}
	return next.String(), nil
}
