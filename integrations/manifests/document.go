package manifests

import (
	"bytes"
	"sync"

	"go.yaml.in/yaml/v3"
)

// document is the text of one YAML document (or JSON value) and where it
// starts. Its node tree, which gives the lines of fields, is built the
// first time a line is asked for: only messages need one, and building it
// for every object would double the cost of reading a large stream.
type document struct {
	text      []byte
	firstLine int

	once sync.Once
	root *yaml.Node // nil when the text does not parse as YAML
}

// node returns the document's root mapping with lines of the file.
func (d *document) node() *yaml.Node {
	d.once.Do(func() {
		var n yaml.Node
		if yaml.Unmarshal(d.text, &n) != nil || len(n.Content) != 1 {
			return
		}
		d.root = n.Content[0]
		shiftLines(d.root, d.firstLine-1)
	})
	return d.root
}

// contentLine is the line of the document's first content: not blank, not
// a comment, not a directive or marker.
func (d *document) contentLine() int {
	line := d.firstLine
	for _, l := range bytes.SplitAfter(d.text, []byte("\n")) {
		t := bytes.TrimSpace(l)
		if len(t) > 0 && t[0] != '#' && t[0] != '%' && !bytes.Equal(t, []byte("---")) {
			return line
		}
		line++
	}
	return d.firstLine
}

// shiftLines moves a node tree parsed from part of a file to the file's lines.
func shiftLines(n *yaml.Node, by int) {
	n.Line += by
	for _, c := range n.Content {
		shiftLines(c, by)
	}
}
