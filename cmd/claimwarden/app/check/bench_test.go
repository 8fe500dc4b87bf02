package check

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/claimwarden/claimwarden/policies"
)

// writeStream writes n StatefulSets of three replicas as one multi-document
// file; size(i) is the i-th one's storage request.
func writeStream(b *testing.B, path string, n int, size func(i int) string) {
	b.Helper()
	var sb strings.Builder
	sb.WriteString("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\nprovisioner: csi.example.com\nallowVolumeExpansion: true\n")
	for i := range n {
		fmt.Fprintf(&sb, `---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db-%[1]d
  namespace: ns-%[2]d
  labels: {app: db-%[1]d}
spec:
  replicas: 3
  serviceName: db-%[1]d
  selector:
    matchLabels: {app: db-%[1]d}
  template:
    metadata:
      labels: {app: db-%[1]d}
    spec:
      containers:
      - name: postgres
        image: postgres:17
        resources: {requests: {cpu: 500m, memory: 1Gi}}
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: fast
      resources:
        requests:
          storage: %[3]s
`, i, i%20, size(i))
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCheck5000 checks one stream of 5,000 StatefulSets (15,000
// claims) against a base: a third grow within max-step, a third beyond
// it, a third are unchanged. One operation is the whole check: decoding
// both streams, diffing, asking the policies about 10,000 claims, and
// printing the table. Besides time and allocations per check it reports
// peak-RSS-MB, the peak resident memory of one check run in a process of
// its own (peakRSS).
func BenchmarkCheck5000(b *testing.B) {
	const n = 5000
	dir := b.TempDir()
	proposed, base := filepath.Join(dir, proposedFile), filepath.Join(dir, baseFile)
	writeStream(b, base, n, func(int) string { return "10Gi" })
	writeStream(b, proposed, n, func(i int) string { return []string{"15Gi", "40Gi", "10Gi"}[i%3] })
	engine, err := policies.New(context.Background(), policies.Options{PollInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(engine.Stop)

	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := checkFiles(engine, dir)
		if err != nil {
			b.Fatal(err)
		}
		// i%3 == 0 grows (1667), 1 is denied (1667), 2 is unchanged (1666).
		if s := r.Summary; s.StatefulSets != n || s.Unchanged != 1666 || s.Allowed != 3*1667 || s.Denied != 3*1667 {
			b.Fatalf("summary %+v", s)
		}
	}
	b.StopTimer()
	peak := peakRSS(b, dir)
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
	if peak > maxPeakRSS {
		b.Errorf("one check peaked at %d MiB resident, more than the %d MiB it may (issue 17)", peak>>20, maxPeakRSS>>20)
	}
}

// maxPeakRSS bounds the peak resident memory of checking 5,000 StatefulSets.
const maxPeakRSS = 150 << 20

// The files checkFiles checks, in one directory.
const (
	proposedFile = "proposed.yaml"
	baseFile     = "base.yaml"
)

// checkFiles is one check as the command runs it: the proposed file
// against the base file, the table written.
func checkFiles(engine policies.Evaluator, dir string) (*Report, error) {
	r, err := Run(context.Background(), Options{Files: []string{filepath.Join(dir, proposedFile)}, Base: []string{filepath.Join(dir, baseFile)}, Policies: engine})
	if err != nil {
		return nil, err
	}
	return r, Write(io.Discard, r, FormatTable, WriteOptions{})
}
