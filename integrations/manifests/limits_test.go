package manifests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// zeros is an endless stream, as /dev/zero or a pipe that never closes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// wantError fails unless err says every part of want.
func wantError(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one saying %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

func TestReadBoundsTotalBytes(t *testing.T) {
	dir := t.TempDir()
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: " + strings.Repeat("x", 600<<10) + "}\n"
	for _, f := range []string{"a.yaml", "b.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Each file fits, the two do not: the limit is on the whole input.
	_, err := Limits{Bytes: 1 << 20}.Read([]string{dir}, nil)
	wantError(t, err, filepath.Join(dir, "b.yaml"), "1Mi", "limit")

	// The default applies to stdin too: an endless stream ends in an error.
	_, err = Read([]string{Stdin}, zeros{})
	wantError(t, err, "stdin", "32Mi", "limit")
}

func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ paths []string }{
		{[]string{fifo}}, // named, or found in the directory
		{[]string{zero}},
		{[]string{dir}},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := Read(c.paths, nil)
			done <- err
		}()
		select {
		case err := <-done:
			wantError(t, err, dir, "not a regular file")
		case <-time.After(30 * time.Second):
			t.Fatalf("Read(%v) is still reading after 30s", c.paths)
		}
	}
}

func TestDecodeBoundsAliasExpansion(t *testing.T) {
	// 100 KB anchored once, used 5,000 times: 125 KB that expand to 500 MB.
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: &big " + strings.Repeat("x", 100_000) + "\n  list: [")
	for i := range 5000 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("*big")
	}
	b.WriteString("]\n")
	_, err := Decode(strings.NewReader(b.String()), "alias.yaml")
	wantError(t, err, "alias.yaml:1", "aliases", "32Mi")

	// Aliases that stay small are read as kubectl reads them.
	objs, err := Decode(strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: &v one\n  b: *v\n"), "ok.yaml")
	if err != nil || len(objs) != 1 || objs[0].Object["data"].(map[string]any)["b"] != "one" {
		t.Errorf("Decode = %v, %v; want the alias resolved", where(objs), err)
	}
}

func TestDecodeBoundsKeysAndNodes(t *testing.T) {
	labels := func(n int) string {
		var b strings.Builder
		b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n")
		for i := range n {
			b.WriteString("    k" + strconv.Itoa(i) + ": v\n")
		}
		return b.String()
	}
	_, err := Decode(strings.NewReader(labels(60_000)), "labels.yaml")
	wantError(t, err, "labels.yaml:5", "ConfigMap c", "metadata.labels", "60000 keys", "50000")

	_, err = Limits{Nodes: 1000}.Decode(strings.NewReader(labels(600)), "nodes.yaml")
	wantError(t, err, "nodes.yaml", "1000")
}

func TestDecodeBoundsOneDocument(t *testing.T) {
	// A mapping of many keys costs the most to decode: one document is bounded.
	labels := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n" + strings.Repeat("  k: v\n", 9<<20/7)
	_, err := Decode(strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n"+labels), "one.yaml")
	wantError(t, err, "one.yaml:5", "8Mi bytes for one document")
	_, err = Limits{DocumentBytes: 100}.Decode(strings.NewReader(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "`+strings.Repeat("v", 100)+`"}}`), "one.json")
	wantError(t, err, "one.json:1", "100 bytes for one document")
}

func TestDecodeBoundsDocuments(t *testing.T) {
	// Empty documents cost as much to split as full ones.
	_, err := Decode(strings.NewReader(strings.Repeat("---\n", 60_000)), "seps.yaml")
	wantError(t, err, "seps.yaml:50001", "50000 documents")

	list := "apiVersion: v1\nkind: List\nitems:\n" + strings.Repeat("- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n", 11)
	_, err = Limits{Documents: 10}.Decode(strings.NewReader(list), "list.yaml")
	wantError(t, err, "list.yaml", "10 documents")
}

func TestDecodeBoundsAliasLaughs(t *testing.T) {
	// Each level lists the previous one ten times: 10^30 values, counted
	// without overflowing.
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  l0: &l0 lol\n")
	for i := 1; i <= 30; i++ {
		prev := "*l" + strconv.Itoa(i-1)
		b.WriteString("  l" + strconv.Itoa(i) + ": &l" + strconv.Itoa(i) + " [" + strings.Repeat(prev+",", 9) + prev + "]\n")
	}
	_, err := Decode(strings.NewReader(b.String()), "laughs.yaml")
	wantError(t, err, "laughs.yaml:1", "aliases expand")
}
