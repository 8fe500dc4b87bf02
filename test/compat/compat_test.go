package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every scenario's test exists in its package under that name, once: a
// renamed test would otherwise turn into "not run" only when make compat runs.
func TestScenarioTestsExist(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range scenarios {
		for _, tc := range s.Tests {
			if seen[tc.Name] {
				t.Errorf("%s is named twice: results are keyed by test name", tc.Name)
			}
			seen[tc.Name] = true
			files, err := filepath.Glob(filepath.Join("..", "..", tc.Package, "*_test.go"))
			if err != nil {
				t.Fatal(err)
			}
			def := regexp.MustCompile(`(?m)^func ` + regexp.QuoteMeta(tc.Name) + `\(t \*testing\.T\)`)
			found := false
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				found = found || def.Match(b)
			}
			if !found {
				t.Errorf("scenario %q: no %s in %s", s.Name, tc.Name, tc.Package)
			}
		}
	}
}

const sampleJSON = `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:10: compat: the server serves no VolumeAttributesClass\n"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":1}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"run","Package":"p","Test":"TestB/sub"}
{"Action":"pass","Package":"p","Test":"TestB/sub"}
{"Action":"fail","Package":"p","Test":"TestB","Elapsed":2}
build output that is not JSON
{"Action":"fail","Package":"p","Elapsed":3}
`

func TestMatrixFromGoTestJSON(t *testing.T) {
	res := map[string]*result{}
	if err := parseResults(strings.NewReader(sampleJSON), res); err != nil {
		t.Fatal(err)
	}
	ss := []scenario{
		{"vac", []test{{"p", "TestA"}}},
		{"both", []test{{"p", "TestA"}, {"p", "TestB"}}},
		{"missing", []test{{"p", "TestC"}}},
	}
	got := renderMatrix(ss, []column{
		{Version: "v1.30.14", Results: res},
		{Version: "v1.31.13", Failed: "building the control plane: exit status 1"},
	})
	want := `| | v1.30.14 | v1.31.13 |
|---|---|---|
| vac | ✓ [1] | — |
| both | ✗ TestB [1] | — |
| missing | not run: TestC | — |

[1] the server serves no VolumeAttributesClass

v1.31.13 did not run: building the control plane: exit status 1
`
	if got != want {
		t.Errorf("matrix:\n%s\nwant:\n%s", got, want)
	}
}

func TestRewriteTableKeepsTheRest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(path, []byte("before\n"+tableBegin+"\nold\n"+tableEnd+"\nafter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rewriteTable(path, "new\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if want := "before\n" + tableBegin + "\nnew\n" + tableEnd + "\nafter\n"; string(b) != want {
		t.Errorf("README:\n%s\nwant:\n%s", b, want)
	}
	if err := rewriteTable(filepath.Join(t.TempDir(), "none.md"), "x"); err == nil {
		t.Error("a missing README: want an error")
	}
}

// make compat runs from the repository's root and rewrites supportPage
// there: the page must hold the markers, or every version's run is lost
// at the end.
func TestSupportPageHasTheTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", supportPage))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if i, j := strings.Index(s, tableBegin), strings.Index(s, tableEnd); i < 0 || j < i {
		t.Errorf("%s has no %q … %q section", supportPage, tableBegin, tableEnd)
	}
}
