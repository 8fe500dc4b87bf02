package usage

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// DefaultSelector is the kubelet's job as kube-prometheus and the
// Prometheus Operator's kubelet ServiceMonitor name it: job "kubelet",
// its /metrics endpoint (the same job scrapes /metrics/cadvisor and
// /metrics/probes, which do not carry volume statistics).
const DefaultSelector = `job="kubelet", metrics_path="/metrics"`

// Matcher is one label matcher of a series selector, as PromQL writes it:
// Name Op "Value".
type Matcher struct {
	Name, Op, Value string
}

// Selector is the label matchers a volume statistics series must match to
// be read: only the kubelet's series are trusted.
type Selector []Matcher

// String is the selector as PromQL writes it, without braces.
func (s Selector) String() string {
	parts := make([]string, len(s))
	for i, m := range s {
		parts[i] = m.Name + m.Op + strconv.Quote(m.Value)
	}
	return strings.Join(parts, ", ")
}

var (
	labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*`)
	// Longest first: "=" is a prefix of "=~".
	matchOps = []string{"=~", "!~", "!=", "="}
)

// InCluster is s with the series of one cluster only, those whose label
// is value: on a Prometheus API holding several clusters' series (Thanos,
// Mimir, a federation), each cluster's claims are read from its own. s
// itself when label is empty.
func (s Selector) InCluster(label, value string) Selector {
	if label == "" {
		return s
	}
	return append(slices.Clip(s), Matcher{Name: label, Op: "=", Value: value})
}

// Names reports whether a matcher of s matches on label.
func (s Selector) Names(label string) bool {
	return slices.ContainsFunc(s, func(m Matcher) bool { return m.Name == label })
}

// CheckLabelName says why name may not be matched on by a selector (the
// operator's matchers, the cluster label), or nil: it must be a
// Prometheus label name that stored series carry, and not namespace,
// which claimwarden matches itself.
func CheckLabelName(name string) error {
	switch {
	case labelName.FindString(name) != name:
		return fmt.Errorf("%q is not a label name", name)
	case name == "namespace":
		return fmt.Errorf("the label namespace is claimwarden's to match (the namespace checked)")
	case strings.HasPrefix(name, "__"):
		return fmt.Errorf("the label %s is not one stored series carry", name)
	}
	return nil
}

// ParseSelector parses PromQL label matchers, comma-separated, without
// braces: name op "value", op one of = != =~ !~, the value a double-quoted
// string with PromQL's (Go's) escapes, a regular expression's anchored as
// PromQL anchors it. At least one; the label names __name__ and namespace
// are claimwarden's to set, and names starting with __ are not on stored
// series.
func ParseSelector(s string) (Selector, error) {
	var out Selector
	rest := strings.TrimSpace(s)
	if rest == "" {
		return nil, fmt.Errorf("is empty: name the series of the kubelet, e.g. %s", DefaultSelector)
	}
	for rest != "" {
		m, after, err := parseMatcher(rest)
		if err != nil {
			return nil, fmt.Errorf("matcher %d: %w", len(out)+1, err)
		}
		out = append(out, m)
		rest = strings.TrimSpace(after)
		if rest == "" {
			break
		}
		if rest[0] != ',' {
			return nil, fmt.Errorf("after matcher %d: want a comma, found %q", len(out), rest)
		}
		if rest = strings.TrimSpace(rest[1:]); rest == "" {
			return nil, fmt.Errorf("a comma ends it")
		}
	}
	return out, nil
}

// parseMatcher parses the matcher s starts with and returns what follows.
func parseMatcher(s string) (Matcher, string, error) {
	var m Matcher
	if m.Name = labelName.FindString(s); m.Name == "" {
		return m, "", fmt.Errorf("%q does not start with a label name", s)
	}
	if err := CheckLabelName(m.Name); err != nil {
		return m, "", err
	}
	s = strings.TrimSpace(s[len(m.Name):])
	for _, op := range matchOps {
		if strings.HasPrefix(s, op) {
			m.Op = op
			break
		}
	}
	if m.Op == "" {
		return m, "", fmt.Errorf("after %s: want one of = != =~ !~", m.Name)
	}
	s = strings.TrimSpace(s[len(m.Op):])
	end := quotedEnd(s)
	if end < 0 {
		return m, "", fmt.Errorf("the value of %s is not a double-quoted string", m.Name)
	}
	v, err := strconv.Unquote(s[:end])
	if err != nil {
		return m, "", fmt.Errorf("the value of %s: %w", m.Name, err)
	}
	m.Value = v
	if m.Op == "=~" || m.Op == "!~" {
		if _, err := regexp.Compile("^(?:" + v + ")$"); err != nil {
			return m, "", fmt.Errorf("the value of %s is not a regular expression: %w", m.Name, err)
		}
	}
	return m, s[end:], nil
}

// quotedEnd is the length of the double-quoted string s starts with,
// escapes skipped; -1 when it does not start with one.
func quotedEnd(s string) int {
	if !strings.HasPrefix(s, `"`) {
		return -1
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}
