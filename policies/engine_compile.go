package policies

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/topdown/print"
)

// query asks for both rule sets in one evaluation. Each is wrapped in an
// array comprehension so that the query is defined even when a package has
// no deny (or warn) rule, while a deny that is defined keeps its exact value
// (a set, or a number from a broken policy) for the shape check.
var query = ast.MustParseBody(`deny := [x | x := data.claimwarden.claims.deny]; warn := [x | x := data.claimwarden.claims.warn]`)

// resizeQuery is query and rule set resize, asked of autoresize questions
// only: a third set in every claim question cost it about a tenth more
// (BenchmarkEvaluate).
var resizeQuery = ast.MustParseBody(`deny := [x | x := data.claimwarden.claims.deny]; warn := [x | x := data.claimwarden.claims.warn]; resize := [x | x := data.claimwarden.claims.resize]`)

// compiled is one revision of the policy set, immutable once built.
type compiled struct {
	revision string
	// failure, when set, makes every verdict a denial quoting it: a source
	// that could not be read, a bundle not loaded yet, or compileError.
	failure      string
	compileError string
	// loading says every failure is a source not read yet (see contribution.loading).
	loading bool
	query   rego.PreparedEvalQuery
	// resizeQuery is query with rule set resize, for KindAutoresize.
	resizeQuery rego.PreparedEvalQuery
	params      map[string]any
	// encodedParams is params as every input of this revision carries them.
	encodedParams *encodedParams
	modules       []string          // module names, for Status
	bundles       map[string]string // bundle name → manifest revision, for decision logs
}

// recompileLocked gathers every source and, if the revision changed,
// compiles and prepares the query and swaps it in. e.mu must be held.
func (e *Engine) recompileLocked(ctx context.Context) {
	contribs := e.contributionsLocked()
	rev := revisionOf(contribs, e.params, e.opts.AllowNetwork)
	prev := e.cur.Load()
	if prev != nil && prev.revision == rev {
		return
	}
	c := e.compile(ctx, contribs, rev)
	c.bundles = map[string]string{}
	for _, b := range e.bundles {
		if b.loaded {
			c.bundles[b.cfg.Name] = b.revision
		}
	}
	e.cur.Store(c)
	switch {
	case c.loading:
		e.log.Info("policies fail closed until every source is read: every claim change is denied meanwhile", "revision", rev, "reason", c.failure)
	case c.failure != "":
		e.log.Error(nil, "policies fail closed: every claim change is denied", "revision", rev, "reason", c.failure)
	default:
		e.log.Info("policies compiled", "revision", rev, "modules", len(c.modules))
	}
	if prev != nil {
		e.notify()
	}
}

// contributionsLocked lists every source in a fixed order: embedded, dirs,
// ConfigMaps by namespace/name, bundles in configuration order.
func (e *Engine) contributionsLocked() []contribution {
	out := []contribution{e.embedded, e.dirs}
	for _, k := range slices.Sorted(maps.Keys(e.configMaps)) {
		out = append(out, e.configMaps[k])
	}
	for _, b := range e.bundles {
		out = append(out, b.contribution())
	}
	return out
}

// revisionOf digests everything that can change a verdict.
func revisionOf(contribs []contribution, params map[string]any, allowNetwork bool) string {
	h := sha256.New()
	for _, c := range contribs {
		writeField(h, c.digest)
	}
	p, _ := json.Marshal(params) // params were normalised from JSON: cannot fail
	writeField(h, string(p))
	writeField(h, fmt.Sprint(allowNetwork))
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// compile parses and compiles every module under its source name, builds
// the data document and prepares the query. Whatever goes wrong becomes
// the failure every verdict of this revision quotes.
func (e *Engine) compile(ctx context.Context, contribs []contribution, rev string) *compiled {
	c := &compiled{revision: rev, params: e.params, encodedParams: encodeParams(e.params)}
	var failures, compileErrs []string
	loading := true
	for _, s := range contribs {
		if s.failure != "" {
			failures = append(failures, s.failure)
			loading = loading && s.loading
		}
		if s.compileError != "" {
			compileErrs = append(compileErrs, s.compileError)
		}
		for _, m := range s.modules {
			c.modules = append(c.modules, m.name)
		}
	}
	if len(failures) > 0 {
		c.failure = strings.Join(failures, "; ")
		c.compileError = strings.Join(compileErrs, "; ")
		c.loading = loading
		return c
	}

	caps := capabilities(e.opts.AllowNetwork)
	mods, err := parseModules(contribs, caps)
	if err == nil {
		if refused := confine(contribs, mods); len(refused) > 0 {
			c.compileError = strings.Join(refused, "; ")
			c.failure = "policy sources refused: " + c.compileError
			return c
		}

		compiler := ast.NewCompiler().WithCapabilities(caps).WithEnablePrintStatements(true)
		if compiler.Compile(mods); compiler.Failed() {
			err = compiler.Errors
		} else {
			c.query, err = e.prepare(ctx, compiler, contribs, caps, query)
		}
		if err == nil {
			c.resizeQuery, err = e.prepare(ctx, compiler, contribs, caps, resizeQuery)
		}
	}
	if err != nil {
		c.compileError = describeCompileError(err)
		c.failure = "policies do not compile: " + c.compileError
	}
	return c
}

// parseModules parses every module with the name of its source, so that
// errors read "configmap/ns/name/key.rego:7: rego_parse_error: ...".
func parseModules(contribs []contribution, caps *ast.Capabilities) (map[string]*ast.Module, error) {
	opts := ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true, Capabilities: caps}
	mods := map[string]*ast.Module{}
	var errs ast.Errors
	for _, s := range contribs {
		for _, m := range s.modules {
			parsed, err := ast.ParseModuleWithOpts(m.name, m.text, opts)
			if err != nil {
				var astErrs ast.Errors
				if errors.As(err, &astErrs) {
					errs = append(errs, astErrs...)
					continue
				}
				return nil, fmt.Errorf("%s: %w", m.name, err)
			}
			mods[m.name] = parsed
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return mods, nil
}

// prepare builds the data document and prepares the query once for this
// revision; evaluations then only bind the input.
func (e *Engine) prepare(ctx context.Context, compiler *ast.Compiler, contribs []contribution, caps *ast.Capabilities, q ast.Body) (rego.PreparedEvalQuery, error) {
	data := map[string]any{}
	for _, s := range contribs {
		if err := mergeData(data, s.data, "data"); err != nil {
			return rego.PreparedEvalQuery{}, err
		}
	}
	params := map[string]any{"claimwarden": map[string]any{"params": e.params}}
	if err := mergeData(data, params, "data"); err != nil {
		return rego.PreparedEvalQuery{}, fmt.Errorf("policies.params: %w", err)
	}
	// AST values on read spare every evaluation a conversion of data.
	store := inmem.NewFromObjectWithOpts(data, inmem.OptRoundTripOnWrite(false), inmem.OptReturnASTValuesOnRead(true))
	return rego.New(
		rego.ParsedQuery(q),
		rego.Compiler(compiler),
		rego.Capabilities(caps),
		rego.Store(store),
		rego.StoreReadAST(true),
		// A builtin error (e.g. units.parse_bytes("lots")) would otherwise
		// make its rule undefined, i.e. a deny that silently does not fire.
		rego.StrictBuiltinErrors(true),
		rego.EnablePrintStatements(true),
		rego.PrintHook(printHook{e}),
		// Keep results as AST terms: JSON would turn a set into an array
		// and hide the difference the shape check needs.
		rego.GenerateJSON(func(t *ast.Term, _ *rego.EvalContext) (any, error) { return t, nil }),
	).PrepareForEval(ctx)
}

// mergeData merges src into dst. Objects merge key by key (copying dst's
// maps on the way down, so no source's data is modified); any other value
// defined by two sources is a conflict, reported with its path.
func mergeData(dst, src map[string]any, at string) error {
	for k, v := range src {
		old, ok := dst[k]
		if !ok {
			dst[k] = v
			continue
		}
		om, ok1 := old.(map[string]any)
		nm, ok2 := v.(map[string]any)
		if !ok1 || !ok2 {
			return fmt.Errorf("%s.%s is defined by two sources", at, k)
		}
		merged := maps.Clone(om)
		if err := mergeData(merged, nm, at+"."+k); err != nil {
			return err
		}
		dst[k] = merged
	}
	return nil
}

// describeCompileError renders compile errors as "file:line: code: message"
// joined by "; ", each explaining sandboxed builtins.
func describeCompileError(err error) string {
	var astErrs ast.Errors
	if !errors.As(err, &astErrs) {
		return err.Error()
	}
	msgs := make([]string, 0, len(astErrs))
	for _, e := range astErrs {
		// The first line only: the rest is a caret under the source line,
		// which a condition or commit status cannot show usefully.
		msg, _, _ := strings.Cut(e.Error(), "\n")
		msgs = append(msgs, explainSandbox(msg))
	}
	return strings.Join(msgs, "; ")
}

// printHook sends print() output of policies to the debug log, so that
// policy authors can trace a decision without a debugger.
type printHook struct{ e *Engine }

func (h printHook) Print(pc print.Context, msg string) error {
	h.e.log.V(1).Info("policy print", "location", pc.Location.String(), "msg", msg)
	return nil
}
