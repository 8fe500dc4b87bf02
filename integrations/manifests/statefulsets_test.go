package manifests

import (
	"strings"
	"testing"
)

// sts writes a StatefulSet whose one template requests storage; extra is
// appended to its spec (indented by two spaces).
func sts(name, storage, extra string) string {
	return `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: ` + name + `
spec:
  replicas: 2
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      resources:
        requests:
          storage: ` + storage + `
` + extra
}

func decodeT(t *testing.T, file, in string) []Object {
	t.Helper()
	objs, err := Decode(strings.NewReader(in), file)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func TestStatefulSets(t *testing.T) {
	objs := decodeT(t, "a.yaml", sts("web", "10Gi", "")+"---\n"+`apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data: {volumeClaimTemplates: "not a spec field"}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: shop
spec:
  serviceName: db
  volumeClaimTemplate: []
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {resources: {requests: {storage: 5Gi}}}
`)
	got, warns, err := StatefulSets(objs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Namespace != "default" || got[0].Name != "web" || got[1].Namespace != "shop" || got[1].Name != "db" {
		t.Fatalf("StatefulSets = %+v, want default/web and shop/db", got)
	}
	if got[0].Location.String() != "a.yaml:1" || got[1].Location.String() != "a.yaml:20" {
		t.Errorf("locations %s and %s, want a.yaml:1 and a.yaml:20", got[0].Location, got[1].Location)
	}
	if *got[0].Spec.Replicas != 2 || got[0].Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String() != "10Gi" {
		t.Errorf("default/web = %+v, want 2 replicas and a 10Gi template", got[0].Spec)
	}
	if *got[1].Spec.Replicas != 1 {
		t.Errorf("shop/db has %d replicas, want the default 1", *got[1].Spec.Replicas)
	}
	want := []string{
		`a.yaml:27: StatefulSet shop/db: unknown field "spec.volumeClaimTemplate"`,
		`a.yaml:25: StatefulSet shop/db: spec.replicas is not set: the API server makes it 1 (an autoscaler may run more)`,
	}
	if len(warns) != len(want) {
		t.Fatalf("warnings = %v, want %q", warns, want)
	}
	for i := range want {
		if warns[i].String() != want[i] {
			t.Errorf("warning %d = %q, want %q", i, warns[i], want[i])
		}
	}
}

func TestStatefulSetsErrors(t *testing.T) {
	const regexpMsg = `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"unit typo", sts("web", "10Gx", ""), []string{`StatefulSet default/web (a.yaml:13): spec.volumeClaimTemplates[0].spec.resources.requests.storage: "10Gx": ` + regexpMsg}},
		{"largest", sts("web", "7Ei", ""), nil},
		{"negative", sts("web", "-1Gi", ""), []string{`StatefulSet default/web (a.yaml:13): spec.volumeClaimTemplates[0].spec.resources.requests.storage: "-1Gi": must be greater than zero`}},
		{"zero", sts("web", "0", ""), []string{`StatefulSet default/web (a.yaml:13): spec.volumeClaimTemplates[0].spec.resources.requests.storage: "0": must be greater than zero`}},
		{"exponent and unit", sts("web", "1e400Gi", ""), []string{`StatefulSet default/web (a.yaml:13): spec.volumeClaimTemplates[0].spec.resources.requests.storage: "1e400Gi": ` + regexpMsg}},
		{"too large", sts("web", "1e400", ""), []string{`StatefulSet default/web (a.yaml:13): spec.volumeClaimTemplates[0].spec.resources.requests.storage: "1e400": is 8Ei or more, beyond the sizes Kubernetes can count in bytes`}},
		{"saturated", sts("web", "9Ei", ""), []string{`StatefulSet default/web (a.yaml:13): spec.volumeClaimTemplates[0].spec.resources.requests.storage: "9Ei": is 8Ei or more, beyond the sizes Kubernetes can count in bytes`}},
		{"limit typo", sts("web", "1Gi", "        limits:\n          storage: 2Gz\n"), []string{`StatefulSet default/web (a.yaml:15): spec.volumeClaimTemplates[0].spec.resources.limits.storage: "2Gz": ` + regexpMsg}},
		{"no storage", strings.Replace(sts("web", "1Gi", ""), "storage: 1Gi", "cpu: 1", 1), []string{`StatefulSet default/web (a.yaml:11): spec.volumeClaimTemplates[0].spec.resources.requests.storage: is not set: a claim template needs a storage request`}},
		{"name read as a bool", strings.Replace(sts("web", "1Gi", ""), "name: data", "name: yes", 1), []string{`StatefulSet default/web (a.yaml:9): spec.volumeClaimTemplates[0].metadata.name: true is a bool, not a name: quote it`}},
		{"template twice", sts("web", "1Gi", "  - metadata: {name: data}\n    spec: {resources: {requests: {storage: 1Gi}}}\n"), []string{`StatefulSet default/web (a.yaml:14): spec.volumeClaimTemplates[1].metadata.name: "data" is also the name of spec.volumeClaimTemplates[0]`}},
		{"templates not a list", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec:\n  volumeClaimTemplates: {data: 1}\n", []string{`StatefulSet default/web (a.yaml:5): spec.volumeClaimTemplates: is a map[string]interface {}, not a list`}},
		{"replicas of the wrong type", strings.Replace(sts("web", "1Gi", ""), "replicas: 2", `replicas: "two"`, 1), []string{`StatefulSet default/web (a.yaml:6): spec.replicas: a string cannot be read as int32`}},
		{"no name", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {}\n", []string{`StatefulSet  (a.yaml:1): metadata.name is not set`}},
		{"another kind with templates", strings.Replace(sts("web", "1Gi", ""), "kind: StatefulSet", "kind: CloneSet", 1), []string{
			`CloneSet web (a.yaml:7): spec.volumeClaimTemplates: only a StatefulSet (apiVersion apps/v1) has volume claim templates claimwarden can check; this is apiVersion "apps/v1"`,
		}},
		{"old apiVersion", strings.Replace(sts("web", "1Gi", ""), "apps/v1", "apps/v1beta2", 1), []string{
			`StatefulSet web (a.yaml:7): spec.volumeClaimTemplates: only a StatefulSet (apiVersion apps/v1) has volume claim templates claimwarden can check; this is apiVersion "apps/v1beta2"`,
		}},
		{"defined twice", sts("web", "1Gi", "") + "---\n" + sts("web", "2Gi", ""), []string{`StatefulSet default/web is defined twice: a.yaml:1 and a.yaml:15`}},
		{"every problem", sts("a", "1Gx", "") + "---\n" + sts("b", "-1", ""), []string{
			`StatefulSet default/a (a.yaml:13): spec.volumeClaimTemplates[0].spec.resources.requests.storage: "1Gx": ` + regexpMsg,
			`StatefulSet default/b (a.yaml:27): spec.volumeClaimTemplates[0].spec.resources.requests.storage: "-1": must be greater than zero`,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _, err := StatefulSets(decodeT(t, "a.yaml", c.in))
			if c.want == nil {
				if err != nil || len(got) != 1 {
					t.Errorf("StatefulSets = %d objects, %v; want 1 and no error", len(got), err)
				}
				return
			}
			if want := strings.Join(c.want, "\n"); err == nil || err.Error() != want {
				t.Errorf("StatefulSets = %d objects, error:\n%v\nwant:\n%s", len(got), err, want)
			}
		})
	}
}

func TestStatefulSetsDefinedTwiceAcrossFiles(t *testing.T) {
	objs := append(decodeT(t, "a.yaml", sts("web", "1Gi", "")), decodeT(t, "b.yaml", "# b\n"+sts("web", "1Gi", ""))...)
	_, _, err := StatefulSets(objs)
	if want := "StatefulSet default/web is defined twice: a.yaml:1 and b.yaml:2"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}
