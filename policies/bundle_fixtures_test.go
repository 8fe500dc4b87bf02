package policies

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
)

// engKey is an RSA key pair in PEM, generated once per test binary.
type engKey struct{ private, public string }

var (
	engKeysOnce sync.Once
	engKeys     [2]engKey
)

// engSigningKeys returns two unrelated key pairs: the trusted one and an
// impostor's.
func engSigningKeys(t testing.TB) (trusted, impostor engKey) {
	t.Helper()
	engKeysOnce.Do(func() {
		for i := range engKeys {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
			if err != nil {
				panic(err)
			}
			engKeys[i] = engKey{
				private: string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})),
				public:  string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})),
			}
		}
	})
	return engKeys[0], engKeys[1]
}

// engBundle describes a bundle to build with OPA's bundle package.
type engBundle struct {
	revision string
	modules  map[string]string // path in the bundle → Rego
	data     map[string]any
	signWith string // private key PEM; empty: unsigned
	// tamper, when set, edits the first module after signing.
	tamper bool
}

// build writes the bundle as the gzipped tarball a bundle server serves.
func (b engBundle) build(t testing.TB) []byte {
	t.Helper()
	data := b.data
	if data == nil {
		data = map[string]any{}
	}
	bb := bundle.Bundle{Manifest: bundle.Manifest{Revision: b.revision}, Data: data}
	for path, text := range b.modules {
		parsed, err := ast.ParseModuleWithOpts(path, text, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatal(err)
		}
		bb.Modules = append(bb.Modules, bundle.ModuleFile{URL: path, Path: path, Raw: []byte(text), Parsed: parsed})
	}
	if b.signWith != "" {
		if err := bb.GenerateSignature(bundle.NewSigningConfig(b.signWith, "RS256", ""), "org-key", false); err != nil {
			t.Fatal(err)
		}
	}
	if b.tamper {
		bb.Modules[0].Raw = append(bb.Modules[0].Raw, []byte("\n# tampered\n")...)
	}
	var buf bytes.Buffer
	if err := bundle.NewWriter(&buf).Write(bb); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// engBundleServer is a bundle server (OPA's bundle service API: ETag and
// If-None-Match) that can go down and come back on the same address.
type engBundleServer struct {
	t     testing.TB
	addr  string
	token string // required bearer token, if set

	mu       sync.Mutex
	srv      *httptest.Server
	body     []byte
	etag     string
	requests int
}

func engServeBundle(t testing.TB, body []byte) *engBundleServer {
	s := &engBundleServer{t: t}
	s.set(body)
	s.up()
	t.Cleanup(s.down)
	return s
}

func (s *engBundleServer) url() string { return "http://" + s.addr + "/bundles/org.tar.gz" }

// set replaces the bundle served, with a new ETag.
func (s *engBundleServer) set(body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.body = body
	s.etag = fmt.Sprintf(`"%d-%d"`, len(body), s.requests)
}

// requireToken makes the server answer 401 without "Bearer <token>".
func (s *engBundleServer) requireToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// count is the number of requests served so far.
func (s *engBundleServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

func (s *engBundleServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	switch {
	case r.URL.Path != "/bundles/org.tar.gz":
		http.NotFound(w, r)
	case s.token != "" && r.Header.Get("Authorization") != "Bearer "+s.token:
		w.WriteHeader(http.StatusUnauthorized)
	case r.Header.Get("If-None-Match") == s.etag:
		w.WriteHeader(http.StatusNotModified)
	default:
		w.Header().Set("ETag", s.etag)
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(s.body)
	}
}

// up starts serving (again) on the server's address.
func (s *engBundleServer) up() {
	addr := s.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		s.t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(s)
	srv.Listener = l
	srv.Start()
	s.mu.Lock()
	s.srv, s.addr = srv, l.Addr().String()
	s.mu.Unlock()
}

// down stops the server: connections are refused until up.
func (s *engBundleServer) down() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// engOrgBundle denies claims over maxGiB, from a signed bundle.
func engOrgBundle(t testing.TB, revision string, maxGiB int, key string) []byte {
	return engBundle{
		revision: revision,
		modules:  map[string]string{"org/claims.rego": engOrgPolicy},
		data:     map[string]any{"org": map[string]any{"max_gib": maxGiB}},
		signWith: key,
	}.build(t)
}
