package helm

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
)

// shapeBytes is the unpacked size of each benchmark record. The real bound
// is DefaultMaxReleaseBytes; peak heap grows linearly with the size, so the
// peakheap/byte ratios hold there too.
const shapeBytes = 8 << 20

// head starts every shape: what ReadRelease checks.
const head = `{"name":"web","namespace":"shop","version":4,"info":{"status":"failed"}`

// BenchmarkDecodeReleaseShapes decodes the worst shapes of record for
// memory, and a realistic one, with decodeRelease and (old/...) with
// json.Unmarshal into Helm's Release, as claimwarden did before: peak heap
// growth during one decode, per unpacked byte.
func BenchmarkDecodeReleaseShapes(b *testing.B) {
	shapes := []struct {
		name string
		js   func() []byte
	}{
		{"tiny-objects", tinyObjects},
		{"tiny-map-entries", tinyMapEntries},
		{"deep", deep},
		{"long-string", longString},
		{"manifest-documents", func() []byte { return releaseJSON(b, manifestDocuments()) }},
		{"large-chart", func() []byte { return releaseJSON(b, largeChart()) }},
	}
	for _, sh := range shapes {
		// Only the packed record stays live: the heap's size sets how much
		// garbage the GC lets pile up, which would blur the peaks.
		js := sh.js()
		data, in := gzipBase64(b, js), float64(len(js))
		js = nil
		for _, dec := range []struct {
			prefix string
			decode func([]byte, int64) (any, error)
		}{
			{"", func(d []byte, max int64) (any, error) { return decodeRelease(d, max) }},
			{"old/", decodeReleaseOld},
		} {
			b.Run(dec.prefix+sh.name, func(b *testing.B) {
				b.ReportAllocs()
				var peak uint64
				for b.Loop() {
					peak = max(peak, peakHeapGrowth(b, func() (any, error) { return dec.decode(data, 32<<20) }))
				}
				b.ReportMetric(in, "bytes-in")
				b.ReportMetric(float64(peak)/in, "peakheap/byte")
			})
		}
	}
}

// peakHeapGrowth is how far the heap's objects grew above what was live
// before decode, sampled every 100µs while it ran, what it returned included.
func peakHeapGrowth(b *testing.B, decode func() (any, error)) uint64 {
	runtime.GC()
	base := heapObjects()
	done := make(chan struct{})
	var wg sync.WaitGroup
	var peak uint64
	wg.Go(func() {
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			peak = max(peak, heapObjects())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	rel, err := decode()
	close(done)
	wg.Wait()
	if err != nil {
		b.Fatal(err)
	}
	runtime.KeepAlive(rel)
	if peak < base {
		return 0
	}
	return peak - base
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// decodeReleaseOld is how claimwarden decoded a record before: all of it,
// into Helm's type.
func decodeReleaseOld(data []byte, maxBytes int64) (any, error) {
	raw, err := base64.StdEncoding.DecodeString(string(data))
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	js, err := io.ReadAll(io.LimitReader(zr, maxBytes+1))
	if err != nil {
		return nil, err
	}
	var rel rspb.Release
	return &rel, json.Unmarshal(js, &rel)
}

// fill writes head, then key's value: open, item until shapeBytes, close.
func fill(key, open, close string, item func(i int) string) []byte {
	var buf bytes.Buffer
	buf.WriteString(head + `,"` + key + `":` + open)
	for i := 0; buf.Len() < shapeBytes; i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(item(i))
	}
	buf.WriteString(close + "}")
	return buf.Bytes()
}

// tinyObjects is what the reported record held: the values given are
// millions of empty objects and arrays.
func tinyObjects() []byte {
	return fill("config", `{"a":[`, "]}", func(i int) string { return [...]string{"{}", "[]"}[i%2] })
}

// tinyMapEntries are the chart's values as a huge map of small ones.
func tinyMapEntries() []byte {
	return fill("chart", `{"values":{`, "}}", func(i int) string { return fmt.Sprintf(`"%x":{"a":0}`, i) })
}

// deep repeats values nested as deep as encoding/json allows (10000
// levels in all, the record's and config's objects and the list included).
func deep() []byte {
	const levels = maxDepth - 3
	one := strings.Repeat("[", levels) + strings.Repeat("]", levels)
	return fill("config", `{"a":[`, "]}", func(int) string { return one })
}

// longString is one chart file as long as the record.
func longString() []byte {
	data := strings.Repeat("AAAA", (shapeBytes-len(head)-64)/4)
	return []byte(head + `,"chart":{"files":[{"name":"big","data":"` + data + `"}]}}`)
}

// manifestDocuments is a manifest of 20,000 small documents, kept whole.
func manifestDocuments() *rspb.Release {
	rel := release(4)
	var m strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&m, "---\n# Source: web/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  key: %s\n", i, strings.Repeat("v", 300))
	}
	rel.Manifest = m.String()
	return rel
}

// largeChart is a record made as kube-prometheus-stack's is: mostly
// templates (stored base64), then the manifest, values and a few files.
func largeChart() *rspb.Release {
	rel := release(4)
	rel.Info.Description = upgradeFailed
	tmpl := strings.Repeat("{{- if .Values.rules.create }}\n  - alert: {{ .Values.name }}Down\n    expr: up == 0\n{{- end }}\n", 60)
	ch := &chartv2.Chart{Metadata: &chartv2.Metadata{Name: "web", Version: "0.2.0", Annotations: map[string]string{"category": "monitoring"}},
		Values: map[string]any{}}
	for i := range 1000 {
		ch.Values[fmt.Sprintf("component%d", i)] = map[string]any{"enabled": true, "replicas": 2.0, "image": map[string]any{"repository": "r", "tag": "v1"}, "args": []any{"--a", "--b"}}
	}
	for i := 0; i < 850; i++ {
		ch.Templates = append(ch.Templates, &common.File{Name: fmt.Sprintf("templates/rules/r%d.yaml", i), Data: []byte(tmpl)})
	}
	ch.Files = []*common.File{{Name: "README.md", Data: []byte(strings.Repeat("docs ", 4000))}}
	rel.Chart = ch
	rel.Config = map[string]any{"grafana": map[string]any{"enabled": false}}
	rel.Manifest = manifestDocuments().Manifest[:shapeBytes/4]
	rel.Info.Status = rcommon.StatusFailed
	return rel
}

func releaseJSON(b *testing.B, rel *rspb.Release) []byte {
	js, err := json.Marshal(rel)
	if err != nil {
		b.Fatal(err)
	}
	return js
}

func gzipBase64(b *testing.B, js []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(js); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return []byte(base64.StdEncoding.EncodeToString(buf.Bytes()))
}
