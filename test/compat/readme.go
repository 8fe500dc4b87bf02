package main

import (
	"fmt"
	"os"
	"strings"
)

// The support table in docs/kubernetes-versions.md sits between these markers.
const (
	tableBegin = "<!-- compat-matrix:begin (written by make compat) -->"
	tableEnd   = "<!-- compat-matrix:end -->"
)

// rewriteTable replaces what lies between the markers in path with table.
func rewriteTable(path, table string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, tableBegin), strings.Index(s, tableEnd)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q … %q section for the support table", path, tableBegin, tableEnd)
	}
	s = s[:i+len(tableBegin)] + "\n" + table + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}
