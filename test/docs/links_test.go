// Package docs_test checks that the README and the pages under docs/ link
// only to files and headings that exist, so that moving a section cannot
// leave a reader at a dead end.
package docs_test

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// root is the repository, seen from this package's directory.
const root = "../.."

// pages are the Markdown files whose links are checked.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md found: is the test run from test/docs?")
	}
	return append([]string{filepath.Join(root, "README.md")}, docs...)
}

func TestLinksResolve(t *testing.T) {
	c := newChecker()
	for _, p := range pages(t) {
		for _, err := range c.check(p) {
			t.Error(err)
		}
	}
}

// The checker itself must refuse what a reader would trip over; otherwise
// TestLinksResolve passing says nothing.
func TestCheckerFindsBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("other.md", "# Other page\n\n## A `code` heading (v2)\n\n<a id=\"row\"></a>\n")
	page := write("page.md", "# Page\n\n## Same\n\n## Same\n\n"+
		"[ok](other.md#a-code-heading-v2) [ok](other.md#row) [ok](#same-1) [ok](https://example.com/x) [ok](other.md)\n\n"+
		"[missing file](gone.md) [missing heading](other.md#nope) [missing here](#same-2) "+
		"[no host](https:///x) [odd scheme](ftp://example.com/x)\n\n"+
		"```\n[not a link](nowhere.md)\n```\n\n`[not a link](nowhere.md)`\n")
	errs := newChecker().check(page)
	want := []string{"gone.md", "other.md#nope", "#same-2", "https:///x", "ftp://example.com/x"}
	if len(errs) != len(want) {
		t.Fatalf("got %d errors %v, want one for each of %v", len(errs), errs, want)
	}
	for i, w := range want {
		if !strings.Contains(errs[i].Error(), w) {
			t.Errorf("error %d = %v, want it to name %s", i, errs[i], w)
		}
	}
}

// checker reads each Markdown file once and remembers its headings' anchors.
type checker struct {
	md      goldmark.Markdown
	anchors map[string]map[string]bool
}

func newChecker() *checker {
	return &checker{
		md:      goldmark.New(goldmark.WithExtensions(extension.GFM)),
		anchors: map[string]map[string]bool{},
	}
}

func (c *checker) parse(path string) (ast.Node, []byte, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return c.md.Parser().Parse(text.NewReader(src)), src, nil
}

// check returns an error for each link of the file at path that leads nowhere.
func (c *checker) check(path string) []error {
	doc, src, err := c.parse(path)
	if err != nil {
		return []error{err}
	}
	var errs []error
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		var dest string
		switch l := n.(type) {
		case *ast.Link:
			dest = string(l.Destination)
		case *ast.Image:
			dest = string(l.Destination)
		case *ast.AutoLink:
			dest = string(l.URL(src))
		default:
			return ast.WalkContinue, nil
		}
		if err := c.resolve(path, dest); err != nil {
			errs = append(errs, fmt.Errorf("%s: link %q: %w", path, dest, err))
		}
		return ast.WalkContinue, nil
	})
	return errs
}

// resolve checks one destination written in the file at from. External
// links are not fetched (CI has no network), only checked to be well-formed.
func (c *checker) resolve(from, dest string) error {
	u, err := url.Parse(dest)
	if err != nil {
		return err
	}
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			return errors.New("no host")
		}
		return nil
	case "mailto":
		return nil
	case "":
	default:
		return fmt.Errorf("scheme %q is neither http(s) nor a relative path", u.Scheme)
	}
	target := from
	if u.Path != "" {
		target = filepath.Join(filepath.Dir(from), filepath.FromSlash(u.Path))
		if _, err := os.Stat(target); err != nil {
			return fmt.Errorf("no such file %s", target)
		}
	}
	if u.Fragment == "" {
		return nil
	}
	if !strings.HasSuffix(target, ".md") {
		return fmt.Errorf("an anchor into %s, which is not Markdown", target)
	}
	anchors, err := c.headings(target)
	if err != nil {
		return err
	}
	if !anchors[u.Fragment] {
		return fmt.Errorf("%s has no heading with the anchor #%s", target, u.Fragment)
	}
	return nil
}

// headings returns the anchors GitHub gives the headings of the file at path.
func (c *checker) headings(path string) (map[string]bool, error) {
	if a, ok := c.anchors[path]; ok {
		return a, nil
	}
	doc, src, err := c.parse(path)
	if err != nil {
		return nil, err
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := n.(*ast.Heading); ok && entering {
			slug := githubSlug(plainText(h, src))
			// GitHub numbers repeated headings: x, x-1, x-2.
			if k := seen[slug]; k > 0 {
				anchors[fmt.Sprintf("%s-%d", slug, k)] = true
			} else {
				anchors[slug] = true
			}
			seen[slug]++
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	for _, m := range htmlAnchor.FindAllSubmatch(src, -1) {
		anchors[string(m[1])] = true
	}
	c.anchors[path] = anchors
	return anchors, nil
}

// htmlAnchor is an anchor written as HTML where a table row, not a heading,
// is the place to link to.
var htmlAnchor = regexp.MustCompile(`<a (?:id|name)="([^"]+)"`)

// plainText is a heading's text as GitHub slugs it: code spans and
// emphasis contribute their text, markup none.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := n.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(src))
		case *ast.String:
			b.Write(t.Value)
		case *ast.RawHTML:
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}
