package policies

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

// engHTTPPolicy asks a URL from params and denies with the reply's body.
const engHTTPPolicy = `package claimwarden.claims

deny contains {"policy": "remote", "msg": resp.raw_body} if {
	resp := http.send({"method": "GET", "url": data.claimwarden.params.url})
}
`

func TestEngineSandboxRefusesNetworkAndProcessBuiltins(t *testing.T) {
	for name, call := range map[string]string{
		"http.send":          `http.send({"method": "GET", "url": "http://127.0.0.1:1"})`,
		"net.lookup_ip_addr": `net.lookup_ip_addr("example.com")`,
		"opa.runtime":        `opa.runtime()`,
		"json.match_schema":  `json.match_schema({}, {"$ref": "http://127.0.0.1:1/s.json"})`,
	} {
		t.Run(name, func(t *testing.T) {
			defaults := fstest.MapFS{"net.rego": {Data: []byte("package claimwarden.claims\n\ndeny contains \"x\" if {\n\tx := " + call + "\n\tx == 1\n}\n")}}
			e := engNew(t, Options{defaults: defaults})
			st := e.Status()
			want := "policies/net.rego:4: rego_type_error: undefined function " + name + sandboxHint
			if st.Ready || st.CompileError != want {
				t.Fatalf("compile error %q, want %q", st.CompileError, want)
			}
			if v := e.Evaluate(context.Background(), engInput(0, 1, 2)); v.Allowed || !strings.Contains(engDenied(v), want) {
				t.Fatalf("verdict %+v", v)
			}
		})
	}
}

func TestEngineSandboxKeepsPureBuiltins(t *testing.T) {
	if sandboxed("units.parse_bytes") || sandboxed("time.now_ns") || !sandboxed("net.cidr_contains") {
		t.Fatal("sandbox list")
	}
	if got := explainSandbox("x.rego:1: rego_type_error: undefined function foo.bar"); strings.Contains(got, sandboxHint) {
		t.Fatalf("hint on a plain typo: %q", got)
	}
}

func TestEngineAllowNetworkEnablesHTTPSend(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("change freeze until Monday"))
	}))
	defer srv.Close()
	defaults := fstest.MapFS{"remote.rego": {Data: []byte(engHTTPPolicy)}}
	params := map[string]any{"url": srv.URL}

	locked := engNew(t, Options{defaults: defaults, Params: params})
	if !strings.Contains(locked.Status().CompileError, "undefined function http.send") {
		t.Fatalf("without AllowNetwork: %+v", locked.Status())
	}

	open := engNew(t, Options{defaults: defaults, Params: params, AllowNetwork: true})
	v := open.Evaluate(context.Background(), engInput(0, 1, 2))
	if engDenied(v) != "remote: change freeze until Monday" {
		t.Fatalf("with AllowNetwork: %q (status %+v)", engDenied(v), open.Status())
	}
	if locked.Revision() == open.Revision() {
		t.Fatal("the sandbox setting must be part of the revision")
	}
}
