package gitedit

import (
	"strings"
	"testing"
)

// One number up, as a person bumps a chart: the patch, or a pre-release's
// last number; build metadata kept. Versions that are not strict SemVer,
// and pre-releases without a number to raise, are refused.
func TestNextChartVersion(t *testing.T) {
	for v, want := range map[string]string{
		"1.2.3":              "1.2.4",
		"0.1.9":              "0.1.10",
		"1.2.3-rc.1":         "1.2.3-rc.2",
		"2.0.0-beta.2.9":     "2.0.0-beta.2.10",
		"1.2.3-7":            "1.2.3-8",
		"1.2.3+build.5":      "1.2.4+build.5",
		"1.2.3-rc.1+abc.def": "1.2.3-rc.2+abc.def",
	} {
		if got, err := NextChartVersion(v); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %s", v, got, err, want)
		}
	}
	for _, v := range []string{"", "1.2", "v1.2.3", "1.2.3-alpha", "1.2.3-rc.x", "latest", "01.2.3"} {
		if got, err := NextChartVersion(v); err == nil || !strings.Contains(err.Error(), v) {
			t.Errorf("%q: %q, %v; want refused, naming it", v, got, err)
		}
	}
}

// Only the version's line changes: comments, quoting, a dependency's own
// version and every other line stay.
func TestBumpChartVersion(t *testing.T) {
	in := `# the shop's database
apiVersion: v2
name: db
version: "1.4.2" # bumped by hand, or by claimwarden
appVersion: "16.2"
dependencies:
- name: common
  version: 2.1.0
  repository: oci://registry.example/charts
`
	out, from, to, err := BumpChartVersion([]byte(in))
	if err != nil || from != "1.4.2" || to != "1.4.3" {
		t.Fatalf("%s → %s, %v; want 1.4.2 → 1.4.3", from, to, err)
	}
	removed, added := lineDiff(in, string(out))
	if len(removed) != 1 || len(added) != 1 || added[0] != `version: "1.4.3" # bumped by hand, or by claimwarden` {
		t.Errorf("removed %q, added %q; want the version's line only", removed, added)
	}

	flow := "{apiVersion: v2, name: db, version: 0.1.0, appVersion: '1'}\n"
	if out, _, _, err := BumpChartVersion([]byte(flow)); err != nil || string(out) != "{apiVersion: v2, name: db, version: 0.1.1, appVersion: '1'}\n" {
		t.Errorf("a flow mapping: %q, %v", out, err)
	}

	for name, src := range map[string]string{
		"no version":       "apiVersion: v2\nname: db\n",
		"a dependency's":   "apiVersion: v2\nname: db\ndependencies:\n- {name: common, version: 2.1.0}\n",
		"not SemVer":       "apiVersion: v2\nname: db\nversion: 1.4\n",
		"a block scalar":   "apiVersion: v2\nname: db\nversion: |\n  1.4.2\n",
		"not a Chart.yaml": "name: [",
	} {
		if out, _, _, err := BumpChartVersion([]byte(src)); err == nil {
			t.Errorf("%s: %q, want refused", name, out)
		}
	}
}
