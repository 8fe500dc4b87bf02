package manifests

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// fuzzLimits are small, so that the fuzzer reaches every limit.
var fuzzLimits = Limits{Bytes: 64 << 10, DocumentBytes: 16 << 10, Documents: 20, Keys: 50, Nodes: 4000}

// fuzzLocation is where an error says the problem is.
var fuzzLocation = regexp.MustCompile(`in\.yaml:(\d+)`)

// FuzzDecode: whatever the bytes, Decode and StatefulSets do not panic,
// the limits hold, every object and every error names a line of the input,
// and a StatefulSet they accept has templates whose storage requests are
// sizes the diff counts in bytes.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		fuzzStatefulSet("10Gi"),
		fuzzStatefulSet("10Gi") + "---\n" + fuzzStatefulSet("1Ei"),
		"apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(fuzzStatefulSet("1Gi"), "\n", "\n  "),
		fuzzStatefulSet("0"), fuzzStatefulSet("1E99999999"), fuzzStatefulSet("9Ei"), fuzzStatefulSet("-1Gi"), fuzzStatefulSet("10.5"),
		"a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n",
		"--- x\n", "key: [unclosed\n", "a: 1\na: 2\n", "\t- bad indent\n", "- just\n- a list\n",
		`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"j"}} {"kind":"x"} [1]`,
		`{"kind":"List","items":[{"kind":"List","items":[{}]}]}`,
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Count(data, []byte("\n")) + 1
		objs, err := fuzzLimits.Decode(bytes.NewReader(data), "in.yaml")
		if err != nil {
			checkLocated(t, "Decode", err, lines)
			return
		}
		if len(objs) > fuzzLimits.Documents {
			t.Fatalf("%d objects, over the limit of %d documents", len(objs), fuzzLimits.Documents)
		}
		for _, o := range objs {
			if o.File != "in.yaml" || o.Line < 1 || o.Line > lines {
				t.Fatalf("object at %s: not a line of the input (%d lines)", o.Location, lines)
			}
		}
		stss, _, err := StatefulSets(objs)
		if err != nil {
			checkLocated(t, "StatefulSets", err, lines)
			return
		}
		for _, s := range stss {
			for _, tmpl := range s.Spec.VolumeClaimTemplates {
				q := tmpl.Spec.Resources.Requests[corev1.ResourceStorage]
				if n, err := diff.Bytes(q); err != nil || n <= 0 {
					t.Fatalf("StatefulSet %s (%s) accepted with template %q of storage %s: %d, %v", s.Name, s.Location, tmpl.Name, q.String(), n, err)
				}
			}
		}
	})
}

// checkLocated fails unless err names the input and, when it names a
// line, one the input has.
func checkLocated(t *testing.T, what string, err error, lines int) {
	t.Helper()
	msg := err.Error()
	if strings.HasPrefix(msg, "reading in.yaml: ") {
		return
	}
	m := fuzzLocation.FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("%s: the error names no location: %v", what, err)
	}
	if n, _ := strconv.Atoi(m[1]); n < 1 || n > lines {
		t.Fatalf("%s: the error names line %d of an input of %d lines: %v", what, n, lines, err)
	}
}

func fuzzStatefulSet(storage string) string {
	return "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\nspec:\n  replicas: 1\n  volumeClaimTemplates:\n  - metadata:\n      name: data\n    spec:\n      resources:\n        requests:\n          storage: " + storage + "\n"
}
