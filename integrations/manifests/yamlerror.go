package manifests

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v2"
)

// yamlLine matches the position the YAML library puts in its messages.
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// parserProblems are the messages of the YAML parser (parserc.go of
// yaml/v2), as opposed to its scanner. For these its fail() prints a
// 0-based line where scanner errors get a 1-based one; the library exposes
// no marks to read it otherwise.
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

// yamlError rewrites an error of sigs.k8s.io/yaml about document d as
// "file:line: invalid YAML: problem", one line per problem.
func yamlError(file string, d *document, err error) error {
	// The scanner reports a problem at the end of the stream one line past
	// a last line without a newline: it is placed on the document's end.
	first, last := d.firstLine, d.firstLine+bytes.Count(d.text, []byte("\n"))
	var te *yaml.TypeError
	if errors.As(err, &te) {
		lines := make([]string, 0, len(te.Errors))
		for _, e := range te.Errors {
			lines = append(lines, yamlProblem(file, first, last, e, false))
		}
		return errors.New(strings.Join(lines, "\n"))
	}
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	return errors.New(yamlProblem(file, first, last, msg, true))
}

// yamlProblem places one message: its line counts from the document's
// first line, and is at most its last; a message without one is about
// that first line.
func yamlProblem(file string, first, last int, msg string, syntax bool) string {
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return fmt.Sprintf("%s: invalid YAML: %s", Location{File: file, Line: first}, strings.TrimPrefix(msg, "yaml: "))
	}
	line, _ := strconv.Atoi(m[1])
	if syntax && parserProblems[m[2]] {
		line++
	}
	return fmt.Sprintf("%s: invalid YAML: %s", Location{File: file, Line: min(first+line-1, last)}, m[2])
}
