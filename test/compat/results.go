package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// notePrefix marks what a test logs about how the server under test made it
// branch (t.Logf("compat: …")): it becomes a footnote of the table.
const notePrefix = "compat: "

// result is what one test did on one version.
type result struct {
	Ran, Passed bool
	Notes       []string
}

// event is the part of a `go test -json` line the table needs.
type event struct {
	Action, Test, Output string
}

// parseResults reads `go test -json` output into results by top-level test
// name (the scenarios' test names are unique across their packages).
func parseResults(r io.Reader, into map[string]*result) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Test == "" || strings.Contains(e.Test, "/") {
			continue // build output and the package's own lines
		}
		res := into[e.Test]
		if res == nil {
			res = &result{}
			into[e.Test] = res
		}
		switch e.Action {
		case "pass":
			res.Ran, res.Passed = true, true
		case "fail":
			res.Ran, res.Passed = true, false
		case "output":
			if i := strings.Index(e.Output, notePrefix); i >= 0 {
				res.Notes = appendOnce(res.Notes, strings.TrimSpace(e.Output[i+len(notePrefix):]))
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading go test -json output: %w", err)
	}
	return nil
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
