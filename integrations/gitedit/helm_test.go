package gitedit

import (
	"os"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"

	"github.com/claimwarden/claimwarden/integrations/sandbox"
)

// A chart of two StatefulSets as database charts write them: a primary
// and read replicas, each size from its own value, and a logs volume
// whose size is the same text as the primary's.
const dbTemplate = `{{- range $role := list "primary" "replica" }}
{{- $v := index $.Values $role }}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ $.Release.Name }}-{{ $role }}
  namespace: {{ $.Release.Namespace }}
spec:
  serviceName: db
  selector: {matchLabels: {role: {{ $role }}}}
  template:
    metadata: {labels: {role: {{ $role }}}}
    spec: {containers: [{name: db, image: postgres}]}
  volumeClaimTemplates:
    - metadata: {name: data}
      spec:
        accessModes: [ReadWriteOnce]
        resources: {requests: {storage: {{ $v.persistence.size | quote }}}}
    - metadata: {name: logs}
      spec:
        accessModes: [ReadWriteOnce]
        resources: {requests: {storage: {{ $.Values.logs.size | quote }}}}
{{- end }}
`

// dbChart is the chart's files: its defaults size the data volumes 8Gi.
func dbChart(templates ...ChartFile) []ChartFile {
	return append([]ChartFile{
		{Name: "Chart.yaml", Data: []byte("apiVersion: v2\nname: db\nversion: 1.0.0\n")},
		{Name: "values.yaml", Data: []byte("primary: {persistence: {size: 8Gi}}\nreplica: {persistence: {size: 8Gi}}\nlogs: {size: 1Gi}\n")},
		{Name: "templates/statefulsets.yaml", Data: []byte(dbTemplate)},
	}, templates...)
}

// The test binary is the sandbox child of its own renders.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

// testRenderer renders in sandbox children of the test binary.
func testRenderer(t *testing.T, l sandbox.Limits) Renderer {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return SandboxRenderer{Runner: sandbox.NewRunner(self, l, 2)}
}

var primary = Target{Namespace: "shop", StatefulSet: "pg-primary", Template: "data"}

func release(t *testing.T, values string) Release {
	return Release{Chart: dbChart(), Options: common.ReleaseOptions{Name: "pg", Namespace: "shop"}, Values: []byte(values), Renderer: testRenderer(t, sandbox.Limits{})}
}

// Rendering, not the key's name, finds the value: of three values that
// read 10Gi (primary, replica, an unrelated limit) only the primary's
// moves the primary's data template, and only its line changes.
func TestSetValuesSizeFindsTheValueByRendering(t *testing.T) {
	values := `# prod database
primary:
  persistence:
    size: 10Gi   # grown in March
replica:
  persistence:
    size: "10Gi"
backup:
  maxSize: 10Gi
logs:
  size: 1Gi
`
	out, changed, err := SetValuesSize(t.Context(), release(t, values), primary, "20Gi", "")
	if err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	removed, added := lineDiff(values, string(out))
	if len(removed) != 1 || len(added) != 1 || added[0] != "    size: 20Gi   # grown in March" {
		t.Errorf("removed %q, added %q; want the primary's size line only", removed, added)
	}
	after, err := release(t, string(out)).render(t.Context(), [][]byte{nil})
	if err != nil {
		t.Fatal(err)
	}
	sizes := after[0].Sizes
	if sizes["shop/pg-primary/data"] != "20Gi" || sizes["shop/pg-replica/data"] != "10Gi" || sizes["shop/pg-primary/logs"] != "1Gi" {
		t.Errorf("rendered sizes %v, want only the primary's data at 20Gi", sizes)
	}

	// The replica's is found the same way, quoting kept.
	out, _, err = SetValuesSize(t.Context(), release(t, values), Target{Namespace: "shop", StatefulSet: "pg-replica", Template: "data"}, "20Gi", "")
	if _, added := lineDiff(values, string(out)); err != nil || len(added) != 1 || added[0] != `    size: "20Gi"` {
		t.Errorf("replica: err %v, added %q", err, added)
	}
}

// A value shared by several templates is no template's own: the edit is
// refused, naming what else it would grow; where rendering cannot tell,
// a key must be named.
func TestSetValuesSizeAsksForAKeyWhenRenderingCannotTell(t *testing.T) {
	logs := Target{Namespace: "shop", StatefulSet: "pg-primary", Template: "logs"}
	values := "logs:\n  size: 1Gi\n"
	_, _, err := SetValuesSize(t.Context(), release(t, values), logs, "2Gi", "")
	if want := `also changes the size of volumeClaimTemplate logs of StatefulSet shop/pg-replica from 1Gi to "2Gi"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err %v, want %q", err, want)
	}
	// The size from the chart's defaults: nothing in the file sets it.
	if _, _, err := SetValuesSize(t.Context(), release(t, "replica: {}\n"), primary, "20Gi", ""); err == nil || !strings.Contains(err.Error(), "no value of the values file sets its size 8Gi") {
		t.Errorf("err %v, want no value found", err)
	}
	// Named, a key that does not move the target is refused too.
	if _, _, err := SetValuesSize(t.Context(), release(t, "primary: {persistence: {size: 8Gi}}\nlogs: {size: 1Gi}\n"), primary, "20Gi", "logs.size"); err == nil {
		t.Error("a key that does not set the target's size was taken")
	}
	out, changed, err := SetValuesSize(t.Context(), release(t, "primary: {persistence: {size: 8Gi}}\n"), primary, "20Gi", "primary.persistence.size")
	if err != nil || !changed || string(out) != "primary: {persistence: {size: 20Gi}}\n" {
		t.Errorf("named key: %q, %v, %v", out, changed, err)
	}
}

// A chart that names no namespace (most do not: Helm applies into the
// release's) is rendered and edited alike.
func TestSetValuesSizeOfAChartWithoutNamespaces(t *testing.T) {
	r := release(t, "primary: {persistence: {size: 8Gi}}\nreplica: {persistence: {size: 8Gi}}\nlogs: {size: 1Gi}\n")
	r.Chart[2].Data = []byte(strings.ReplaceAll(dbTemplate, "  namespace: {{ $.Release.Namespace }}\n", ""))
	out, changed, err := SetValuesSize(t.Context(), r, primary, "20Gi", "")
	if err != nil || !changed || string(out) != "primary: {persistence: {size: 20Gi}}\nreplica: {persistence: {size: 8Gi}}\nlogs: {size: 1Gi}\n" {
		t.Errorf("SetValuesSize = %q, %v, %v; want the primary's size only", out, changed, err)
	}
}

func TestSetValuesSizeUnchangedAtThatSize(t *testing.T) {
	values := "primary:\n  persistence:\n    size: 20Gi\n"
	out, changed, err := SetValuesSize(t.Context(), release(t, values), primary, "20Gi", "")
	if err != nil || changed || string(out) != values {
		t.Errorf("%q, %v, %v; want the file unchanged", out, changed, err)
	}
}

func TestValuePathString(t *testing.T) {
	if got := (valuePath{"replicas", 0, "persistence", "size"}).String(); got != "replicas[0].persistence.size" {
		t.Errorf("%q", got)
	}
}
