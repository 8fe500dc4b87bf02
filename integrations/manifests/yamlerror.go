package manifests

import (
	"fmt"
	"regexp"
	"strconv"
)

// yamlLine matches the position go.yaml.in/yaml/v3 puts in its errors.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserProblems are the messages of yaml/v3's parser (parserc.go), as
// opposed to its scanner. For these its fail() prints a 0-based line (of
// the enclosing block, or of the problem) where scanner errors get a 1-based
// one; the library exposes no marks to read it otherwise.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// yamlError rewrites a yaml/v3 error as "file:line: invalid YAML: problem".
func yamlError(file string, err error) error {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		// Without a line the problem is on the first one (both marks 0).
		return fmt.Errorf("%s: invalid YAML: %s", Location{File: file, Line: 1}, trimYAMLPrefix(err.Error()))
	}
	line, _ := strconv.Atoi(m[1])
	if parserProblems[m[2]] {
		line++
	}
	return fmt.Errorf("%s: invalid YAML: %s", Location{File: file, Line: line}, m[2])
}

func trimYAMLPrefix(s string) string {
	if len(s) > 6 && s[:6] == "yaml: " {
		return s[6:]
	}
	return s
}
