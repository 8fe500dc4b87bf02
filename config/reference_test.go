package config

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// referencePage is the configuration reference users read.
const referencePage = "../docs/configuration.md"

// A key in Config but not in the reference page, or the reverse, fails
// here: the keys are read from the struct by reflection, so a new field
// cannot be left undocumented.
func TestReferenceListsEveryKey(t *testing.T) {
	documented := referenceRows(t)
	var inCode []string
	walkKeys(reflect.TypeFor[Config](), "", func(name string, _ reflect.Type) { inCode = append(inCode, name) })

	seen := map[string]int{}
	for _, r := range documented {
		seen[r.key]++
	}
	for _, k := range inCode {
		if seen[k] == 0 {
			t.Errorf("key %s is in config.Config but not in %s", k, referencePage)
		}
	}
	for k, n := range seen {
		if !slices.Contains(inCode, k) {
			t.Errorf("%s documents %s, which config.Config does not have", referencePage, k)
		}
		if n > 1 {
			t.Errorf("%s documents %s %d times, want once", referencePage, k, n)
		}
	}
}

// Each documented key names the flag BindFlags registers for it, or says
// it is set in the file only.
func TestReferenceNamesEachFlag(t *testing.T) {
	flags := map[string]string{}
	for _, k := range Keys() {
		flags[k.Name] = k.Flag
	}
	for _, r := range referenceRows(t) {
		flag, ok := flags[r.key]
		if !ok {
			continue // TestReferenceListsEveryKey reports it
		}
		want := "--" + flag
		if flag == "" {
			want = "file only"
		}
		if r.flag != want {
			t.Errorf("%s: key %s has the flag %q, want %q", referencePage, r.key, r.flag, want)
		}
	}
}

// The keys inside each entry of a list of objects (a bundle, a host) are
// named in that list's row, where a reader looks for them.
func TestReferenceNamesEntryKeys(t *testing.T) {
	meaning := map[string]string{}
	for _, r := range referenceRows(t) {
		meaning[r.key] = r.meaning
	}
	for _, l := range listsOfObjects {
		for f := range l.typ.Fields() {
			name := f.Tag.Get("mapstructure")
			if !strings.Contains(meaning[l.key], "`"+name+"`") {
				t.Errorf("%s: the row of %s does not name the key %s of %s", referencePage, l.key, name, l.entry)
			}
		}
	}
}

// walkKeys calls fn with every key of typ: its leaves, where nested structs
// are followed and lists and maps end a key, as the configuration file nests.
func walkKeys(typ reflect.Type, prefix string, fn func(string, reflect.Type)) {
	for f := range typ.Fields() {
		name := prefix + f.Tag.Get("mapstructure")
		if f.Type.Kind() == reflect.Struct {
			walkKeys(f.Type, name+".", fn)
			continue
		}
		fn(name, f.Type)
	}
}

// referenceRow is a row of a table of the reference page headed
// key | flag | default | meaning.
type referenceRow struct{ key, flag, meaning string }

func referenceRows(t *testing.T) []referenceRow {
	t.Helper()
	src, err := os.ReadFile(referencePage)
	if err != nil {
		t.Fatal(err)
	}
	doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(src))
	var rows []referenceRow
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		table, ok := n.(*east.Table)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		if header := cells(table.FirstChild(), src); !slices.Equal(header, []string{"key", "flag", "default", "meaning"}) {
			return ast.WalkSkipChildren, nil
		}
		for row := table.FirstChild().NextSibling(); row != nil; row = row.NextSibling() {
			c := cells(row, src)
			rows = append(rows, referenceRow{key: strings.Trim(c[0], "`"), flag: strings.Trim(c[1], "`"), meaning: c[3]})
		}
		return ast.WalkSkipChildren, nil
	})
	if len(rows) == 0 {
		t.Fatalf("%s has no table headed key | flag | default | meaning", referencePage)
	}
	for _, r := range rows {
		if strings.ContainsAny(r.key, "`, ") {
			t.Errorf("%s: a row's first column %q is not one key", referencePage, r.key)
		}
	}
	return rows
}

// cells returns the text of each cell of a table row, code spans kept in
// backquotes so that a key is told from prose.
func cells(row ast.Node, src []byte) []string {
	var out []string
	for c := row.FirstChild(); c != nil; c = c.NextSibling() {
		var b strings.Builder
		_ = ast.Walk(c, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			switch n := n.(type) {
			case *ast.CodeSpan:
				b.WriteString("`")
			case *ast.Text:
				if entering {
					b.Write(n.Segment.Value(src))
				}
			case *ast.String:
				if entering {
					b.Write(n.Value)
				}
			}
			return ast.WalkContinue, nil
		})
		out = append(out, strings.TrimSpace(b.String()))
	}
	return out
}
