package policies

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
)

// shipped holds the policies claimwarden ships (policies/*.rego). Their
// _test.rego files are embedded too (a pattern cannot exclude them) and
// skipped when loading.
//
//go:embed *.rego
var shipped embed.FS

// embeddedContribution reads the defaults, named "policies/<file>" after
// where they live in the repository.
func embeddedContribution(fsys fs.FS) contribution {
	names, err := fs.Glob(fsys, "*.rego")
	if err != nil {
		return newContribution(shippedSource, nil, nil, "reading the embedded policies: "+err.Error())
	}
	var mods []module
	for _, n := range names {
		if isRegoTest(n) {
			continue
		}
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return newContribution(shippedSource, nil, nil, "reading the embedded policies: "+err.Error())
		}
		mods = append(mods, module{name: "policies/" + n, text: string(b)})
	}
	return newContribution(shippedSource, mods, nil, "")
}

func isRegoTest(name string) bool { return strings.HasSuffix(name, "_test.rego") }

// dirContribution reads dirs with OPA's loader: .rego files become modules
// named by their path, .json and .yaml files become data under the path of
// their directory (OPA's `opa run dir/` layout). A file that does not parse
// or a directory that cannot be read is a failure: every verdict is then a
// denial naming it, since the organisation's policies are unknown.
func dirContribution(dirs []string) contribution {
	if len(dirs) == 0 {
		return newContribution(dirsSource, nil, nil, "")
	}
	res, err := loader.NewFileLoader().
		WithRegoVersion(ast.RegoV1).
		WithProcessAnnotation(true).
		Filtered(dirs, skipInDirs)
	if err != nil {
		return dirFailure(err)
	}
	mods := make([]module, 0, len(res.Modules))
	for _, f := range res.Modules {
		mods = append(mods, module{name: f.Name, text: string(f.Raw)})
	}
	return newContribution(dirsSource, mods, res.Documents, "")
}

// dirFailure describes a failed load. Parse errors read like compile
// errors ("/etc/claimwarden/policies/org.rego:5: rego_parse_error: ...") and
// are reported as such; anything else (a missing directory, bad JSON) is a
// source failure.
func dirFailure(err error) contribution {
	var errs loader.Errors
	var parse ast.Errors
	if errors.As(err, &errs) {
		for _, e := range errs {
			var ae *ast.Error
			if !errors.As(e, &ae) {
				parse = nil
				break
			}
			parse = append(parse, ae)
		}
	}
	if len(parse) > 0 {
		msg := describeCompileError(parse)
		c := newContribution(dirsSource, nil, nil, "policies do not compile: "+msg)
		c.compileError = msg
		return c
	}
	first, _, _ := strings.Cut(err.Error(), "\n")
	return newContribution(dirsSource, nil, nil, "loading policies.dirs: "+first)
}

// skipInDirs is the loader filter for policies.dirs: hidden entries (a
// mounted ConfigMap's ..data and ..2024_* directories hold the same files
// again), Rego tests, and files that are neither Rego nor data (README.md,
// bundle tarballs).
func skipInDirs(abspath string, info fs.FileInfo, depth int) bool {
	name := info.Name()
	if depth > 0 && strings.HasPrefix(name, ".") {
		return true
	}
	if info.IsDir() {
		return false
	}
	if isRegoTest(name) {
		return true
	}
	switch path.Ext(name) {
	case ".rego", ".json", ".yaml", ".yml":
		return false
	}
	return true
}

// reloadDirs re-reads policies.dirs and recompiles when their content changed.
func (e *Engine) reloadDirs(ctx context.Context) {
	if len(e.opts.Dirs) == 0 {
		return
	}
	c := dirContribution(e.opts.Dirs)
	e.mu.Lock()
	defer e.mu.Unlock()
	if c.digest == e.dirs.digest {
		return
	}
	e.dirs = c
	e.recompileLocked(ctx)
}

// pollDirs re-reads the directories every interval. Polling the content
// (rather than watching with inotify) also sees ConfigMap volume updates,
// which swap a symlink, and works on any filesystem; the directories are
// small and an unchanged read costs no recompile.
func (e *Engine) pollDirs(ctx context.Context, every time.Duration) {
	defer e.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			e.reloadDirs(ctx)
		}
	}
}
