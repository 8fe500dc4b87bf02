package policies

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// engWrite writes a file under dir, creating directories.
func engWrite(t testing.TB, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const engOrgPolicy = `package claimwarden.claims

deny contains {"policy": "org-max", "msg": sprintf("over %v GiB", [data.org.max_gib])} if {
	input.change.storage.toBytes > data.org.max_gib * 1073741824
}
`

func TestEngineDirPoliciesAndData(t *testing.T) {
	dir := t.TempDir()
	engWrite(t, dir, "org.rego", engOrgPolicy)
	engWrite(t, dir, "org/data.json", `{"max_gib": 100}`)
	engWrite(t, dir, "org_test.rego", "this is not Rego, and tests are skipped")
	engWrite(t, dir, "README.md", "not loaded")
	e := engNew(t, Options{Dirs: []string{dir}, PollInterval: -1})

	if v := e.Evaluate(context.Background(), engInput(0, 10, 50)); !v.Allowed {
		t.Fatalf("50 GiB: %+v", v)
	}
	v := e.Evaluate(context.Background(), engInput(0, 10, 200))
	if engDenied(v) != "org-max: over 100 GiB" {
		t.Fatalf("200 GiB: %q", engDenied(v))
	}
	if mods := e.Status().Modules; len(mods) != 2 || mods[1] != filepath.Join(dir, "org.rego") {
		t.Fatalf("modules %v: dir modules are named by their path", mods)
	}
}

func TestEngineDirReloadPicksUpChanges(t *testing.T) {
	dir := t.TempDir()
	engWrite(t, dir, "org.rego", engOrgPolicy)
	engWrite(t, dir, "org/data.json", `{"max_gib": 100}`)
	e := engNew(t, Options{Dirs: []string{dir}, PollInterval: -1})
	engDrain(e)
	rev := e.Revision()

	// Re-reading unchanged files neither recompiles nor signals.
	if err := e.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.Revision() != rev || engSignalled(e) {
		t.Fatal("an unchanged directory changed the revision")
	}

	engWrite(t, dir, "org/data.json", `{"max_gib": 1000}`)
	if err := e.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.Revision() == rev || !engSignalled(e) {
		t.Fatal("changed data must change the revision and signal Changes")
	}
	if v := e.Evaluate(context.Background(), engInput(0, 10, 200)); !v.Allowed {
		t.Fatalf("after raising the limit: %+v", v)
	}
}

func TestEngineDirPollerPicksUpChanges(t *testing.T) {
	dir := t.TempDir()
	engWrite(t, dir, "org.rego", engOrgPolicy)
	engWrite(t, dir, "org/data.json", `{"max_gib": 100}`)
	e := engNew(t, Options{Dirs: []string{dir}, PollInterval: 10 * time.Millisecond})
	engDrain(e)

	engWrite(t, dir, "org/data.json", `{"max_gib": 1000}`)
	select {
	case <-e.Changes():
	case <-time.After(10 * time.Second):
		t.Fatal("the poller did not pick up the change")
	}
	if v := e.Evaluate(context.Background(), engInput(0, 10, 200)); !v.Allowed {
		t.Fatalf("after raising the limit: %+v", v)
	}
}

func TestEngineDirMountedConfigMapLayout(t *testing.T) {
	// A ConfigMap volume: the visible names are symlinks into ..data, which
	// links to a timestamped directory; hidden entries must not load twice.
	dir := t.TempDir()
	engWrite(t, dir, "..2025_01_01/org.rego", engOrgPolicy)
	engWrite(t, dir, "..2025_01_01/data.json", `{"org": {"max_gib": 5}}`)
	for _, link := range [][2]string{
		{"..2025_01_01", "..data"}, {"..data/org.rego", "org.rego"}, {"..data/data.json", "data.json"},
	} {
		if err := os.Symlink(link[0], filepath.Join(dir, link[1])); err != nil {
			t.Fatal(err)
		}
	}
	e := engNew(t, Options{Dirs: []string{dir}, PollInterval: -1})
	if got := engDenied(e.Evaluate(context.Background(), engInput(0, 1, 10))); got != "org-max: over 5 GiB" {
		t.Fatalf("got %q (status %+v)", got, e.Status())
	}
}

func TestEngineUnreadableDirFailsClosed(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent")
	e := engNew(t, Options{Dirs: []string{missing}, PollInterval: -1})
	v := e.Evaluate(context.Background(), engInput(0, 1, 2))
	if v.Allowed || !strings.Contains(engDenied(v), "loading policies.dirs:") {
		t.Fatalf("got %+v", v)
	}
	if e.Status().Ready {
		t.Fatal("ready without the configured directory")
	}
}

func TestEngineConfigMapSetter(t *testing.T) {
	e := engNew(t, Options{})
	engDrain(e)
	rev := e.Revision()
	files := map[string]string{"max.rego": strings.ReplaceAll(engOrgPolicy, "data.org.max_gib", "5")}
	e.SetConfigMapPolicies("claimwarden-system", "org", files)
	if !engSignalled(e) || e.Revision() == rev {
		t.Fatal("adding a ConfigMap must change the revision")
	}
	v := e.Evaluate(context.Background(), engInput(0, 1, 10))
	if engDenied(v) != "org-max: over 5 GiB" {
		t.Fatalf("got %q", engDenied(v))
	}
	withCM := e.Revision()

	// The same content again is no change.
	e.SetConfigMapPolicies("claimwarden-system", "org", files)
	if engSignalled(e) || e.Revision() != withCM {
		t.Fatal("an unchanged ConfigMap changed the revision")
	}

	e.SetConfigMapPolicies("claimwarden-system", "org", nil)
	if !engSignalled(e) || e.Revision() != rev {
		t.Fatal("removing the ConfigMap must restore the previous revision")
	}
	if v := e.Evaluate(context.Background(), engInput(0, 1, 10)); !v.Allowed {
		t.Fatalf("after removal: %+v", v)
	}
}

func TestEngineConfigMapRegoKeys(t *testing.T) {
	got := regoKeys(map[string]string{"a.rego": "A", "a_test.rego": "T", "README.md": "R"})
	if len(got) != 1 || got["a.rego"] != "A" {
		t.Fatalf("got %v", got)
	}
}

func TestEngineChangesCoalesce(t *testing.T) {
	e := engNew(t, Options{})
	engDrain(e)
	for i, text := range []string{"warn contains \"a\" if true", "warn contains \"b\" if true"} {
		e.SetConfigMapPolicies("ns", "cm", map[string]string{"w.rego": "package claimwarden.claims\n" + text})
		if i == 0 && len(e.changes) != 1 {
			t.Fatal("no signal after the first change")
		}
	}
	if !engSignalled(e) || engSignalled(e) {
		t.Fatal("two changes must leave exactly one pending signal")
	}
}

func TestEngineEvaluateDuringRecompiles(t *testing.T) {
	// Evaluations read a snapshot: while policies flip between two
	// revisions, every verdict comes from one of them, whole.
	e := engNew(t, Options{})
	deny := map[string]string{"d.rego": "package claimwarden.claims\n\ndeny contains {\"policy\": \"flip\", \"msg\": \"no\"} if true\n"}
	e.SetConfigMapPolicies("ns", "flip", deny)
	revDeny := e.Revision()
	e.SetConfigMapPolicies("ns", "flip", nil)
	revAllow := e.Revision()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			v := e.Evaluate(context.Background(), engInput(0, 1, 2))
			ok := (v.Revision == revDeny && !v.Allowed && v.Denials[0].Policy == "flip") ||
				(v.Revision == revAllow && v.Allowed)
			if !ok {
				done <- fmt.Errorf("verdict %d mixes revisions: %+v", i, v)
				return
			}
		}
	}()
	for range 50 {
		e.SetConfigMapPolicies("ns", "flip", deny)
		e.SetConfigMapPolicies("ns", "flip", nil)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestEngineDirParseErrorIsACompileError(t *testing.T) {
	dir := t.TempDir()
	engWrite(t, dir, "org.rego", "package claimwarden.claims\n\ndeny contains \"x\" if {\n\tinput.\n}\n")
	e := engNew(t, Options{Dirs: []string{dir}, PollInterval: -1})
	want := filepath.Join(dir, "org.rego") + ":5: rego_parse_error: unexpected whitespace token: expected identifier"
	if st := e.Status(); st.Ready || st.CompileError != want {
		t.Fatalf("compile error %q, want %q", st.CompileError, want)
	}
	v := e.Evaluate(context.Background(), engInput(0, 1, 2))
	if v.Allowed || engDenied(v) != EnginePolicy+": policies do not compile: "+want {
		t.Fatalf("got %q", engDenied(v))
	}
}
