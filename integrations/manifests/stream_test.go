package manifests

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
)

// configMaps is a stream of n ConfigMaps c0…c(n-1), every tenth document a
// List of two.
func configMaps(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i%10 == 9 && i+1 < n {
			fmt.Fprintf(&b, "---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c%d}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c%d}}\n", i, i+1)
			i++
			continue
		}
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n", i)
	}
	return b.String()
}

// TestStreamInInputOrder: objects decoded on every core reach yield in input
// order, each with what prepare made of it, and as many decoded documents as
// the lookahead allows wait for yield at once, not the whole stream.
func TestStreamInInputOrder(t *testing.T) {
	const n = 2000
	var prepared, yielded atomic.Int64
	bound := int64(runtime.GOMAXPROCS(0)*lookahead+1) * 2 // documents, of up to two objects
	var names []string
	err := Stream(Limits{}, []string{Stdin}, strings.NewReader(configMaps(n)),
		func(o Object) string {
			prepared.Add(1)
			return "prepared " + o.GetName()
		},
		func(o Object, p string) error {
			if p != "prepared "+o.GetName() {
				return fmt.Errorf("object %s came with %q", o.GetName(), p)
			}
			if ahead := prepared.Load() - yielded.Add(1); ahead > bound {
				return fmt.Errorf("%d objects decoded ahead of yield, more than the lookahead of %d", ahead, bound)
			}
			names = append(names, o.GetName())
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range names {
		if name != fmt.Sprintf("c%d", i) {
			t.Fatalf("object %d is %s: out of input order", i, name)
		}
	}
	if len(names) != n {
		t.Errorf("%d objects yielded, want %d", len(names), n)
	}
}

// TestStreamStops: an error of yield ends the stream with that error, and
// of several bad documents the first in input order is the one reported,
// whichever core read it first.
func TestStreamStops(t *testing.T) {
	stop := errors.New("enough")
	calls := 0
	err := Stream(Limits{}, []string{Stdin}, strings.NewReader(configMaps(500)),
		func(Object) struct{} { return struct{}{} },
		func(Object, struct{}) error {
			calls++
			if calls == 10 {
				return stop
			}
			return nil
		})
	if !errors.Is(err, stop) || calls != 10 {
		t.Errorf("Stream = %v after %d calls, want yield's error after 10", err, calls)
	}

	bad := configMaps(300) + "---\nfoo: [unclosed\n" + configMaps(300) + "---\n- a list\n"
	// The parser finds the bracket unclosed where the document ends, on the
	// line after it.
	line := strings.Count(configMaps(300), "\n") + 3
	for range 20 {
		_, err := Decode(strings.NewReader(bad), "bad.yaml")
		wantError(t, err, fmt.Sprintf("bad.yaml:%d: invalid YAML", line))
	}
}

// TestTypeAgain: the JSON of a candidate types again to the StatefulSet
// CandidateOf typed, replicas defaulted and empty maps kept.
func TestTypeAgain(t *testing.T) {
	objs := decodeT(t, "a.yaml", strings.Replace(sts("web", "10Gi", "  bogus: 1\n"), "  replicas: 2\n", "", 1)+"  template:\n    metadata: {labels: {}}\n")
	c := CandidateOf(objs[0])
	if c.err != nil || c.sts == nil {
		t.Fatalf("CandidateOf = %+v", c)
	}
	again, err := TypeAgain(c.JSON())
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(again, c.sts.StatefulSet) || again.Spec.Template.Labels == nil || *again.Spec.Replicas != 1 {
		t.Errorf("typed again:\n%+v\nwant\n%+v", again, c.sts.StatefulSet)
	}
}
