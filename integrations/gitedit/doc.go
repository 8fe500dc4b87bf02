// Package gitedit changes, in a file of a Git repository, the value that
// sets a StatefulSet's claim template size and nothing else: the node is
// found by parsing the YAML (kyaml's nodes, with their positions) and only
// the bytes of that one scalar are replaced, so comments, key order,
// quoting, indentation and every other line stay as they were and the
// pull request's diff is the one line. Autoresize (issue 30) proposes its
// resizes through it.
package gitedit
