package gitedit

import (
	"errors"
	"strings"
	"testing"
)

var web = Target{Namespace: "shop", StatefulSet: "web", Template: "data"}

// The edit changes the one value and nothing else: every other byte of
// the file, comments and formatting included, is as it was.
func TestSetSizeChangesTheOneValue(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain, with a comment", `# the shop's database
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  namespace: shop
spec:
  volumeClaimTemplates:
    - metadata:
        name: logs
      spec:
        resources:
          requests:
            storage: 1Gi
    - metadata:
        name: data   # the data volume
      spec:
        accessModes: [ReadWriteOnce]
        resources:
          requests:
            storage: 10Gi  # grown in March
`, "            storage: 20Gi  # grown in March\n"},
		{"double-quoted, no namespace", `kind: StatefulSet
metadata: {name: web}
spec:
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      resources: {requests: {storage: "10Gi"}}
`, `      resources: {requests: {storage: "20Gi"}}` + "\n"},
		{"single-quoted in a flow mapping", `kind: StatefulSet
metadata: {name: web, namespace: shop}
spec:
  volumeClaimTemplates:
  - {metadata: {name: data}, spec: {resources: {requests: {storage: '10Gi'}}}}
`, `  - {metadata: {name: data}, spec: {resources: {requests: {storage: '20Gi'}}}}` + "\n"},
		{"second document; the first is another namespace's", `kind: StatefulSet
metadata:
  name: web
  namespace: other
spec:
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      resources:
        requests:
          storage: 10Gi
---
kind: StatefulSet
metadata:
  name: web
  namespace: shop
spec:
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      resources:
        requests:
          storage: 10Gi
`, "          storage: 20Gi\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, changed, err := SetSize([]byte(tc.in), web, "20Gi")
			if err != nil || !changed {
				t.Fatalf("changed %v, err %v", changed, err)
			}
			removed, added := lineDiff(tc.in, string(out))
			if len(removed) != 1 || len(added) != 1 || added[0]+"\n" != tc.want {
				t.Errorf("removed %q, added %q; want exactly the line %q", removed, added, tc.want)
			}
		})
	}
}

// lineDiff is what a line diff of a and b removes and adds, for files
// whose lines stay in place.
func lineDiff(a, b string) (removed, added []string) {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(al) != len(bl) {
		return al, bl
	}
	for i := range al {
		if al[i] != bl[i] {
			removed, added = append(removed, al[i]), append(added, bl[i])
		}
	}
	return removed, added
}

func TestSetSizeUnchangedWhenAlreadyThatSize(t *testing.T) {
	in := "kind: StatefulSet\nmetadata: {name: web}\nspec:\n  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec: {resources: {requests: {storage: 20Gi}}}\n"
	out, changed, err := SetSize([]byte(in), web, "20Gi")
	if err != nil || changed || string(out) != in {
		t.Errorf("changed %v, err %v, out %q; want the file as it was", changed, err, out)
	}
}

// What cannot be edited without guessing is refused, naming why.
func TestSetSizeRefusesWhatItCannotEditSafely(t *testing.T) {
	sts := func(ns, storage string) string {
		return "kind: StatefulSet\nmetadata: {name: web, namespace: " + ns + "}\nspec:\n  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec:\n      resources:\n        requests:\n          storage: " + storage + "\n"
	}
	for _, tc := range []struct{ name, in, want string }{
		{"not set", "kind: StatefulSet\nmetadata: {name: web}\nspec: {replicas: 2}\n", ErrNotSet.Error()},
		{"another StatefulSet", strings.Replace(sts("shop", "1Gi"), "name: web", "name: db", 1), ErrNotSet.Error()},
		{"another namespace", sts("other", "1Gi"), ErrNotSet.Error()},
		{"set twice", sts("shop", "1Gi") + "---\n" + sts("shop", "2Gi"), "set on lines 9 and 19"},
		{"a block scalar", sts("shop", "|\n            10Gi"), "block scalar"},
		{"a mapping", sts("shop", "{value: 10Gi}"), "is not a scalar"},
		{"not YAML", "kind: [", "reading YAML"},
		{"too large", strings.Repeat("#", MaxFileBytes+1), "more than the"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := SetSize([]byte(tc.in), web, "20Gi")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want it to say %q", err, tc.want)
			}
		})
	}
	if _, _, err := SetSize([]byte("kind: StatefulSet\nmetadata: {name: web}\n"), web, "1Gi"); !errors.Is(err, ErrNotSet) {
		t.Errorf("err %v, want ErrNotSet", err)
	}
}

// Of several files, the one that sets the size is edited; none, or two,
// are refused saying which.
func TestSetSizeInOne(t *testing.T) {
	sts := "kind: StatefulSet\nmetadata: {name: web}\nspec:\n  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec: {resources: {requests: {storage: 10Gi}}}\n"
	files := map[string]string{"a.yaml": "kind: Service\nmetadata: {name: web}\n", "b.yaml": sts, "c.yaml": sts}
	read := func(p string) ([]byte, error) { return []byte(files[p]), nil }
	edits, err := SetSizeInOne([]string{"a.yaml", "b.yaml"}, read, web, "20Gi")
	if err != nil || len(edits) != 1 || edits[0].Path != "b.yaml" || !strings.Contains(string(edits[0].Content), "storage: 20Gi") {
		t.Errorf("edits %+v, %v; want b.yaml at 20Gi", edits, err)
	}
	if edits, err := SetSizeInOne([]string{"b.yaml"}, read, web, "10Gi"); err != nil || edits != nil {
		t.Errorf("at the size already: %+v, %v; want no edit", edits, err)
	}
	if _, err := SetSizeInOne([]string{"a.yaml"}, read, web, "20Gi"); !errors.Is(err, ErrNotSet) {
		t.Errorf("none sets it: %v, want ErrNotSet", err)
	}
	var several *SetInSeveral
	if _, err := SetSizeInOne([]string{"b.yaml", "c.yaml"}, read, web, "20Gi"); !errors.As(err, &several) || strings.Join(several.Paths, ",") != "b.yaml,c.yaml" {
		t.Errorf("two set it: %v, want SetInSeveral naming both", err)
	}
}
