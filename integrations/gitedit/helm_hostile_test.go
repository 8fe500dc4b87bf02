package gitedit

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/integrations/sandbox"
)

// A tenant's chart is data: a template that loops, or builds a string
// until memory runs out, is stopped by the sandbox's bounds and the edit
// refused, saying which bound.
func TestSetValuesSizeHostileTemplates(t *testing.T) {
	limits := sandbox.Limits{Timeout: time.Minute, CPU: 2 * time.Second, Memory: 96 << 20}
	for _, tc := range []struct {
		name, template, want string
	}{
		{"loop", `{{ range $i := until 20000 }}{{ range $j := until 20000 }}{{ end }}{{ end }}`, "of CPU time"},
		{"string", `{{ $s := "xxxxxxxxxxxxxxxx" }}{{ range until 40 }}{{ $s = print $s $s }}{{ end }}{{ $s }}`, "MiB of memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := release(t, "primary: {persistence: {size: 10Gi}}\n")
			r.Chart = dbChart(ChartFile{Name: "templates/hostile.yaml", Data: []byte(tc.template)})
			r.Renderer = testRenderer(t, limits)
			start := time.Now()
			_, _, err := SetValuesSize(t.Context(), r, primary, "20Gi", "")
			if !errors.Is(err, sandbox.ErrLimit) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want the sandbox's bound %q", err, tc.want)
			}
			t.Logf("refused after %s: %v", time.Since(start).Round(time.Millisecond), err)
		})
	}
}

// Subcharts in Git unpack within one budget for the whole chart: a few
// hundred KiB of archives that unpack to hundreds of MiB are refused
// before Helm's loader reads them, nested ones included.
func TestSetValuesSizeArchiveBudget(t *testing.T) {
	big := tgz(t, "bomb/templates/zeros.yaml", bytes.Repeat([]byte{'0'}, 20<<20))
	nested := tgz(t, "outer/charts/inner.tgz", big)
	for name, files := range map[string][]ChartFile{
		"two archives": {{Name: "charts/a.tgz", Data: big}, {Name: "charts/b.tgz", Data: big}},
		"nested":       {{Name: "charts/outer.tgz", Data: nested}, {Name: "charts/b.tgz", Data: big}},
	} {
		t.Run(name, func(t *testing.T) {
			if len(big) > 100<<10 {
				t.Fatalf("the archive has %d bytes: not a bomb", len(big))
			}
			r := release(t, "primary: {persistence: {size: 10Gi}}\n")
			r.Chart = dbChart(files...)
			_, _, err := SetValuesSize(t.Context(), r, primary, "20Gi", "")
			if err == nil || !strings.Contains(err.Error(), "archives (subcharts) unpack to more than 32 MiB") {
				t.Fatalf("got %v, want the unpack budget named", err)
			}
		})
	}
}

// An alias shares one scalar between two templates: editing it would grow
// the replica too, so the edit is refused, naming it.
func TestSetValuesSizeRefusesAnAlias(t *testing.T) {
	values := "primary: {persistence: {size: &size 10Gi}}\nreplica: {persistence: {size: *size}}\n"
	_, _, err := SetValuesSize(t.Context(), release(t, values), primary, "20Gi", "")
	if want := `also changes the size of volumeClaimTemplate data of StatefulSet shop/pg-replica from 10Gi to "20Gi"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
}

// A value that sets the size and something else (here a ConfigMap's
// setting) is refused; a document that renders differently each time (a
// generated password) is not held against an edit.
func TestSetValuesSizeComparesEveryDocument(t *testing.T) {
	config := ChartFile{Name: "templates/config.yaml", Data: []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: pg-config, namespace: shop}
data: {maxWal: {{ .Values.primary.persistence.size | quote }}}
`)}
	r := release(t, "primary: {persistence: {size: 10Gi}}\n")
	r.Chart = dbChart(config)
	_, _, err := SetValuesSize(t.Context(), r, primary, "20Gi", "")
	if want := "also changes v1 ConfigMap shop/pg-config"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}

	secret := ChartFile{Name: "templates/secret.yaml", Data: []byte(`apiVersion: v1
kind: Secret
metadata: {name: pg-password, namespace: shop}
stringData: {password: {{ randAlphaNum 16 | quote }}}
`)}
	r.Chart = dbChart(secret)
	out, changed, err := SetValuesSize(t.Context(), r, primary, "20Gi", "")
	if err != nil || !changed || string(out) != "primary: {persistence: {size: 20Gi}}\n" {
		t.Fatalf("with a generated password: %q, %v, %v", out, changed, err)
	}
}

// tgz is a gzipped tar of one file.
func tgz(t *testing.T, name string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
