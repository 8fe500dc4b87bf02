package policies

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// confineBypasses are modules an added source might use to switch off the
// shipped max-step policy (max_step_percent 100) for a +300% change.
var confineBypasses = map[string]struct {
	rego, want string
	line       int // where the violation is
}{
	"params package": {
		rego: "package claimwarden.params\n\nmax_step_percent := 100000\n",
		want: "package claimwarden.params is reserved",
		line: 1,
	},
	"root package": {
		rego: "package claimwarden\n\nparams := {\"max_step_percent\": 100000}\n",
		want: "package claimwarden is reserved",
		line: 1,
	},
	"lib rule redefined": {
		rego: "package claimwarden.claims\n\n_disabled_ids := {\"max-step\"}\n",
		want: fmt.Sprintf("rule _disabled_ids conflicts with rule _disabled_ids, defined by the shipped policies (policies/lib.rego:%d)", libLine("_disabled_ids :=")),
		line: 3,
	},
	"ref head": {
		rego: "package claimwarden.claims\n\nparams.max_step_percent := 100000\n",
		want: "rule params.max_step_percent conflicts with rule params, defined by the shipped policies",
		line: 3,
	},
	"default rule": {
		rego: "package claimwarden.claims\n\ndefault _max_step_limits_usual := false\n",
		want: "rule _max_step_limits_usual conflicts with rule _max_step_limits_usual, defined by the shipped policies",
		line: 3,
	},
	"else chain": {
		rego: "package claimwarden.claims\n\nmine := 1 if false else := 2\n\n_claim_sizes := [1, 1] if false else := [1, 1]\n",
		want: "rule _claim_sizes conflicts with rule _claim_sizes, defined by the shipped policies",
		line: 5,
	},
	"function": {
		rego: "package claimwarden.claims\n\ndisabled(_) := true\n",
		want: "rule disabled conflicts with rule disabled, defined by the shipped policies",
		line: 3,
	},
	"deny not a partial set": {
		rego: "package claimwarden.claims\n\ndeny := set()\n",
		want: "deny must be a partial set rule",
		line: 3,
	},
}

// confineCheck asserts that e denies the +300% change quoting want, with
// the violation in Status, and that the shipped max-step still holds.
func confineCheck(t *testing.T, e *Engine, want string) {
	t.Helper()
	v := e.Evaluate(context.Background(), engInput(0, 10, 40))
	got := engDenied(v)
	if v.Allowed || !strings.Contains(got, want) {
		t.Fatalf("+300%% with an override attempt: want a denial quoting %q, got allowed=%v %q", want, v.Allowed, got)
	}
	if st := e.Status(); st.Ready || !strings.Contains(st.CompileError, want) {
		t.Fatalf("status must report the violation %q: %+v", want, st)
	}
}

func TestConfineAddedSourcesCannotOverrideShipped(t *testing.T) {
	params := map[string]any{"max_step_percent": 100}
	for name, tc := range confineBypasses {
		t.Run("dir/"+name, func(t *testing.T) {
			dir := t.TempDir()
			engWrite(t, dir, "evil.rego", tc.rego)
			e := engNew(t, Options{defaults: shipped, Params: params, Dirs: []string{dir}, PollInterval: -1})
			confineCheck(t, e, fmt.Sprintf("%s:%d: ", filepath.Join(dir, "evil.rego"), tc.line))
			confineCheck(t, e, tc.want)
		})
		t.Run("configmap/"+name, func(t *testing.T) {
			e := engNew(t, Options{defaults: shipped, Params: params})
			e.SetConfigMapPolicies("claimwarden-system", "evil", map[string]string{"evil.rego": tc.rego})
			confineCheck(t, e, fmt.Sprintf("configmap/claimwarden-system/evil/evil.rego:%d: ", tc.line))
			confineCheck(t, e, tc.want)
		})
		t.Run("bundle/"+name, func(t *testing.T) {
			srv := engServeBundle(t, engBundle{revision: "v1", modules: map[string]string{"evil/evil.rego": tc.rego}}.build(t))
			e := engNew(t, Options{defaults: shipped, Params: params, Bundles: []BundleSource{{Name: "org", URL: srv.url(), Trigger: "manual"}}})
			if err := e.Reload(context.Background()); err != nil {
				t.Fatal(err)
			}
			confineCheck(t, e, fmt.Sprintf("bundle/org/evil/evil.rego:%d: ", tc.line))
			confineCheck(t, e, tc.want)
		})
	}
}

func TestConfineSignedBundleIsConfinedToo(t *testing.T) {
	key, _ := engSigningKeys(t)
	body := engBundle{revision: "v1", signWith: key.private,
		modules: map[string]string{"evil.rego": confineBypasses["params package"].rego}}.build(t)
	srv := engServeBundle(t, body)
	e := engNew(t, Options{defaults: shipped, Params: map[string]any{"max_step_percent": 100},
		Bundles: []BundleSource{{Name: "org", URL: srv.url(), PublicKey: key.public, Trigger: "manual"}}})
	if err := e.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	confineCheck(t, e, "bundle/org/evil.rego:1: claimwarden_confinement_error: package claimwarden.params is reserved")
}

func TestConfineDataUnderClaimwardenIsRejected(t *testing.T) {
	const want = "data.claimwarden is reserved for the engine"
	params := map[string]any{"max_step_percent": 100}
	t.Run("dir", func(t *testing.T) {
		dir := t.TempDir()
		engWrite(t, dir, "org.rego", engOrgPolicy)
		engWrite(t, dir, "claimwarden/params/data.json", `{"max_step_bytes": null, "disabled": ["max-step"]}`)
		e := engNew(t, Options{defaults: shipped, Params: params, Dirs: []string{dir}, PollInterval: -1})
		confineCheck(t, e, "policies.dirs: "+want)
	})
	t.Run("bundle", func(t *testing.T) {
		srv := engServeBundle(t, engBundle{revision: "v1",
			modules: map[string]string{"org/claims.rego": engOrgPolicy},
			data:    map[string]any{"org": map[string]any{"max_gib": 1000}, "claimwarden": map[string]any{"params": map[string]any{"disabled": []any{"max-step"}}}},
		}.build(t))
		e := engNew(t, Options{defaults: shipped, Params: params, Bundles: []BundleSource{{Name: "org", URL: srv.url(), Trigger: "manual"}}})
		if err := e.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
		confineCheck(t, e, "bundle/org: "+want)
	})
}

func TestConfineMisspeltPackagesAreErrors(t *testing.T) {
	for name, tc := range map[string]struct{ rego, want string }{
		"claimz": {
			rego: "package claimwarden.claimz\n\ndeny contains \"x\" if true\n",
			want: "package claimwarden.claimz is reserved",
		},
		"sub-package": {
			rego: "package claimwarden.claims.custom\n\ndeny contains \"x\" if true\n",
			want: "package claimwarden.claims.custom is reserved",
		},
		"deny in a library": {
			rego: "package org.claims\n\ndeny contains \"x\" if true\n",
			want: "deny in package org.claims is never consulted: claimwarden queries data.claimwarden.claims.deny/warn",
		},
		"no deny or warn": {
			rego: "package claimwarden.claims\n\nhelper := 1\n",
			want: "configmap/claimwarden-system/typo defines no deny or warn rule in package claimwarden.claims",
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := engNew(t, Options{defaults: shipped})
			e.SetConfigMapPolicies("claimwarden-system", "typo", map[string]string{"p.rego": tc.rego})
			v := e.Evaluate(context.Background(), engInput(0, 10, 11))
			if got := engDenied(v); v.Allowed || !strings.Contains(got, tc.want) || !strings.Contains(got, "configmap/claimwarden-system/typo") {
				t.Fatalf("want a denial quoting %q and naming the ConfigMap, got %q", tc.want, got)
			}
		})
	}
}

func TestConfineAllowsConfinedPolicies(t *testing.T) {
	// A library package, helpers of their own and params read (not
	// written): what an organisation's policies need.
	lib := "package org.lib\n\nbig(n) if n > data.org.max_gib * 1073741824\n"
	claims := `package claimwarden.claims

import data.org.lib

_org_limit := data.org.max_gib

deny contains {"policy": "org-max", "msg": sprintf("%s: over %v GiB (max_step_percent %v)", [claim_ref, _org_limit, params.max_step_percent])} if {
	lib.big(input.change.storage.toBytes)
}
`
	dir := t.TempDir()
	engWrite(t, dir, "lib.rego", lib)
	engWrite(t, dir, "claims.rego", claims)
	engWrite(t, dir, "org/data.json", `{"max_gib": 100}`)
	e := engNew(t, Options{defaults: shipped, Params: map[string]any{"max_step_percent": 10000}, Dirs: []string{dir}, PollInterval: -1})
	if st := e.Status(); !st.Ready {
		t.Fatalf("confined policies refused: %+v", st)
	}
	if v := e.Evaluate(context.Background(), engInput(0, 10, 90)); !v.Allowed {
		t.Fatalf("+800%% under max_step_percent 10000: %s", engDenied(v))
	}
	want := "org-max: claim data-db-0 (StatefulSet shop/db): over 100 GiB (max_step_percent 10000)"
	if got := engDenied(e.Evaluate(context.Background(), engInput(0, 10, 200))); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestConfineSourcesCannotRedefineEachOther(t *testing.T) {
	// A second ConfigMap must not switch off the first one's denial by
	// adding to its helper rule.
	e := engNew(t, Options{defaults: shipped})
	e.SetConfigMapPolicies("claimwarden-system", "a", map[string]string{"a.rego": "package claimwarden.claims\n\ndeny contains \"a\" if not _a_ok\n\n_a_ok if input.change.storage.toBytes < 5\n"})
	e.SetConfigMapPolicies("claimwarden-system", "b", map[string]string{"b.rego": "package claimwarden.claims\n\nwarn contains \"b\" if false\n\n_a_ok := true\n"})
	got := engDenied(e.Evaluate(context.Background(), engInput(0, 10, 11)))
	if !strings.Contains(got, "configmap/claimwarden-system/b/b.rego:5: ") || !strings.Contains(got, "rule _a_ok conflicts with rule _a_ok, defined by configmap/claimwarden-system/a (configmap/claimwarden-system/a/a.rego:5)") {
		t.Fatalf("got %q", got)
	}
}

func TestConfineSourcesKeepTheirPackagesAndData(t *testing.T) {
	// A ConfigMap must not add rules to another source's library package,
	// and a bundle must not add data under a key a directory uses.
	dir := t.TempDir()
	engWrite(t, dir, "lib.rego", "package org.lib\n\nexempt(ns) if ns in data.org.exempt\n")
	engWrite(t, dir, "claims.rego", "package claimwarden.claims\n\nimport data.org.lib\n\ndeny contains \"frozen\" if not lib.exempt(input.change.namespace)\n")
	engWrite(t, dir, "org/data.json", `{"exempt": []}`)
	e := engNew(t, Options{defaults: shipped, Dirs: []string{dir}, PollInterval: -1})
	if v := e.Evaluate(context.Background(), engInput(0, 10, 11)); engDenied(v) != "unknown: frozen" {
		t.Fatalf("before: %q", engDenied(v))
	}
	e.SetConfigMapPolicies("ns", "lift", map[string]string{"l.rego": "package org.lib\n\nexempt(_) := true\n"})
	if got := engDenied(e.Evaluate(context.Background(), engInput(0, 10, 11))); !strings.Contains(got, "configmap/ns/lift/l.rego:1: claimwarden_confinement_error: package org.lib conflicts with package org.lib, defined by policies.dirs") {
		t.Fatalf("a second source in the same library package: %q", got)
	}
	e.SetConfigMapPolicies("ns", "lift", nil)

	srv := engServeBundle(t, engBundle{revision: "v1",
		modules: map[string]string{"b.rego": "package claimwarden.claims\n\nwarn contains \"b\" if false\n"},
		data:    map[string]any{"org": map[string]any{"more": true}},
	}.build(t))
	e = engNew(t, Options{defaults: shipped, Dirs: []string{dir}, PollInterval: -1,
		Bundles: []BundleSource{{Name: "b", URL: srv.url(), Trigger: "manual"}}})
	if err := e.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := engDenied(e.Evaluate(context.Background(), engInput(0, 10, 11))); !strings.Contains(got, "bundle/b: data.org conflicts with package org.lib, defined by policies.dirs") {
		t.Fatalf("two sources' data under one key: %q", got)
	}
}

// libLine is the line of lib.rego that starts with prefix, so that the
// expected messages follow the file as parameters are added above it.
func libLine(prefix string) int {
	data, err := os.ReadFile("lib.rego")
	if err != nil {
		panic(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, prefix) {
			return i + 1
		}
	}
	panic("lib.rego has no line starting with " + prefix)
}
