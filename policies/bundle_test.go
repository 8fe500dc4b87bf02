package policies

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// engBundleEngine is an engine with one manually triggered bundle "org"
// from srv, verified with publicKey when set.
func engBundleEngine(t testing.TB, srv *engBundleServer, publicKey string, mod func(*BundleSource)) *Engine {
	bs := BundleSource{Name: "org", URL: srv.url(), PublicKey: publicKey, Trigger: "manual"}
	if mod != nil {
		mod(&bs)
	}
	return engNew(t, Options{Bundles: []BundleSource{bs}})
}

func TestEngineBundleSignedLoads(t *testing.T) {
	key, _ := engSigningKeys(t)
	srv := engServeBundle(t, engOrgBundle(t, "v1", 100, key.private))
	e := engBundleEngine(t, srv, key.public, nil)

	// Until the first download, the organisation's guardrails are unknown.
	v := e.Evaluate(context.Background(), engInput(0, 10, 20))
	if v.Allowed || !strings.Contains(engDenied(v), "bundle org has not been loaded yet") {
		t.Fatalf("before the first download: %+v", v)
	}
	if st := e.Status(); st.Ready || !strings.Contains(st.Message, "bundle org: not loaded yet") {
		t.Fatalf("status before: %+v", st)
	}

	engDrain(e)
	if err := e.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !engSignalled(e) {
		t.Fatal("loading a bundle must signal Changes")
	}
	if v := e.Evaluate(context.Background(), engInput(0, 10, 20)); !v.Allowed {
		t.Fatalf("20 GiB: %+v", v)
	}
	if got := engDenied(e.Evaluate(context.Background(), engInput(0, 10, 200))); got != "org-max: over 100 GiB" {
		t.Fatalf("200 GiB: %q", got)
	}
	st := e.Status()
	if !st.Ready || st.Stale || !strings.Contains(strings.Join(st.Modules, ","), "bundle/org/org/claims.rego") {
		t.Fatalf("status: %+v", st)
	}
}

func TestEngineBundleSignatureRefused(t *testing.T) {
	trusted, impostor := engSigningKeys(t)
	for name, tc := range map[string]struct {
		body []byte
		want string
	}{
		"tampered": {
			body: engBundle{revision: "v1", modules: map[string]string{"org/claims.rego": engOrgPolicy}, signWith: trusted.private, tamper: true}.build(t),
			want: "digest mismatch",
		},
		"other key": {body: engOrgBundle(t, "v1", 100, impostor.private), want: "failed to verify JWT signature"},
		"unsigned":  {body: engOrgBundle(t, "v1", 100, ""), want: "bundle missing .signatures.json file"},
	} {
		t.Run(name, func(t *testing.T) {
			srv := engServeBundle(t, tc.body)
			e := engBundleEngine(t, srv, trusted.public, nil)
			err := e.Reload(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Reload: %v, want %q", err, tc.want)
			}
			st := e.Status()
			if st.Ready || !strings.Contains(st.Message, tc.want) {
				t.Fatalf("status: %+v", st)
			}
			if v := e.Evaluate(context.Background(), engInput(0, 10, 20)); v.Allowed {
				t.Fatal("an unverified bundle let a claim change through")
			}
		})
	}
}

func TestEngineBundleServerDownKeepsLastGood(t *testing.T) {
	key, _ := engSigningKeys(t)
	srv := engServeBundle(t, engOrgBundle(t, "v1", 100, key.private))
	e := engBundleEngine(t, srv, key.public, nil)
	if err := e.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	rev := e.Revision()

	srv.down()
	if err := e.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Reload with the server down: %v", err)
	}
	st := e.Status()
	if !st.Ready || !st.Stale || !strings.Contains(st.Message, "bundle org: last fetch failed at ") ||
		!strings.Contains(st.Message, "connection refused") || !strings.Contains(st.Message, `using revision "v1" from `) {
		t.Fatalf("status with the server down: %+v", st)
	}
	if got := engDenied(e.Evaluate(context.Background(), engInput(0, 10, 200))); got != "org-max: over 100 GiB" {
		t.Fatalf("the last good bundle must still decide: %q", got)
	}
	if e.Revision() != rev {
		t.Fatal("a failed download changed the revision")
	}

	srv.up()
	if err := e.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := e.Status(); !st.Ready || st.Stale {
		t.Fatalf("status after recovery: %+v", st)
	}
	if e.Revision() != rev {
		t.Fatal("the same bundle again changed the revision")
	}
}

func TestEngineBundleNotModifiedClearsStale(t *testing.T) {
	key, _ := engSigningKeys(t)
	srv := engServeBundle(t, engOrgBundle(t, "v1", 100, key.private))
	srv.requireToken("s3cret")
	e := engBundleEngine(t, srv, key.public, func(b *BundleSource) { b.Token = "s3cret" })
	if err := e.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A second poll is answered 304 (the ETag matches): still fresh.
	if err := e.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := e.Status(); !st.Ready || st.Stale {
		t.Fatalf("status: %+v", st)
	}
	if n := srv.count(); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

func TestEngineBundleTokenRequired(t *testing.T) {
	key, _ := engSigningKeys(t)
	srv := engServeBundle(t, engOrgBundle(t, "v1", 100, key.private))
	srv.requireToken("s3cret")
	e := engBundleEngine(t, srv, key.public, func(b *BundleSource) { b.Token = "wrong" })
	if err := e.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("Reload: %v", err)
	}
}

func TestEngineBundleCompileErrorNamesBundleFile(t *testing.T) {
	srv := engServeBundle(t, engBundle{revision: "v1", modules: map[string]string{
		"org/bad.rego": "package claimwarden.claims\n\ndeny contains \"x\" if {\n\tcount(42) > 1\n}\n",
	}}.build(t))
	e := engBundleEngine(t, srv, "", nil)
	if err := e.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := e.Status().CompileError; !strings.HasPrefix(got, "bundle/org/org/bad.rego:4: rego_type_error:") {
		t.Fatalf("compile error %q", got)
	}
}

func TestEngineBundleTenMegabytes(t *testing.T) {
	// An inventory of 220,000 random ids (14 MB of JSON) next to the
	// policy: random text does not compress, so the tarball the server
	// sends is over 10 MB too.
	entries := make([]any, 0, 220_000)
	raw := make([]byte, 48)
	for range cap(entries) {
		_, _ = rand.Read(raw)
		entries = append(entries, base64.StdEncoding.EncodeToString(raw))
	}
	big := engBundle{
		revision: "big",
		modules:  map[string]string{"org/claims.rego": engOrgPolicy},
		data:     map[string]any{"org": map[string]any{"max_gib": 100, "inventory": entries}},
	}.build(t)
	if len(big) < 10<<20 {
		t.Fatalf("the bundle is %d bytes, want over 10 MiB", len(big))
	}
	srv := engServeBundle(t, big)

	e := engBundleEngine(t, srv, "", nil)
	if err := e.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := engDenied(e.Evaluate(context.Background(), engInput(0, 10, 200))); got != "org-max: over 100 GiB" {
		t.Fatalf("with the 10 MB bundle: %q (status %+v)", got, e.Status())
	}

	small := engBundleEngine(t, srv, "", func(b *BundleSource) { b.SizeLimitBytes = 1 << 20 })
	err := small.Reload(context.Background())
	if err == nil || !strings.Contains(err.Error(), "exceeds configured size_limit_bytes (1048576 bytes)") {
		t.Fatalf("over the limit: %v", err)
	}
	if small.Status().Ready {
		t.Fatal("an over-sized bundle was loaded")
	}
}

func TestEngineBundlePeriodicPolling(t *testing.T) {
	key, _ := engSigningKeys(t)
	srv := engServeBundle(t, engOrgBundle(t, "v1", 100, key.private))
	e := engNew(t, Options{Bundles: []BundleSource{{
		Name: "org", URL: srv.url(), PublicKey: key.public, PollMin: time.Second, PollMax: time.Second,
	}}})
	engWait(t, "the first download", func() bool { return e.Status().Ready })
	engDrain(e)

	srv.set(engOrgBundle(t, "v2", 1000, key.private))
	select {
	case <-e.Changes():
	case <-time.After(10 * time.Second):
		t.Fatal("the new bundle was not picked up")
	}
	if v := e.Evaluate(context.Background(), engInput(0, 10, 200)); !v.Allowed {
		t.Fatalf("after v2: %+v", v)
	}
}

func TestEngineBundleConfigErrors(t *testing.T) {
	for name, bs := range map[string]BundleSource{
		"no name":     {URL: "http://127.0.0.1/b.tar.gz"},
		"bad url":     {Name: "a", URL: "ftp://x/b.tar.gz"},
		"bad poll":    {Name: "a", URL: "http://127.0.0.1/b", PollMin: 10 * time.Second, PollMax: time.Second},
		"bad trigger": {Name: "a", URL: "http://127.0.0.1/b", Trigger: "sometimes"},
	} {
		if _, err := New(context.Background(), Options{defaults: engDefaults, Bundles: []BundleSource{bs}}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
