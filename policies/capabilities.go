package policies

import (
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// sandboxHint is appended to a compile error that calls a builtin the
// sandbox removed, so the reader learns why a builtin OPA documents is
// "undefined" here and which setting brings it back.
const sandboxHint = " (network, file and process builtins are disabled in claimwarden's policy sandbox; policies.allowNetwork enables them)"

// sandboxed reports whether the sandbox removes the builtin called name.
//
// Removed: http.send (arbitrary requests), every net.* builtin (DNS lookups;
// the CIDR helpers go too because the sandbox is specified as "no net.*" and
// claim policies have no use for them), opa.runtime (the controller's
// environment variables and configuration, i.e. secrets), and
// json.match_schema / json.verify_schema, whose JSON-schema loader follows
// remote and file $refs over HTTP and the local filesystem.
func sandboxed(name string) bool {
	switch name {
	case "http.send", "opa.runtime", "json.match_schema", "json.verify_schema":
		return true
	}
	return strings.HasPrefix(name, "net.")
}

// capabilities returns the OPA capabilities policies compile against: this
// OPA version's, less the sandboxed builtins unless allowNetwork. A policy
// calling a removed builtin fails to compile ("undefined function"), which
// the engine turns into a denial of every claim change.
func capabilities(allowNetwork bool) *ast.Capabilities {
	c := ast.CapabilitiesForThisVersion()
	if allowNetwork {
		return c
	}
	c.Builtins = slices.DeleteFunc(c.Builtins, func(b *ast.Builtin) bool { return sandboxed(b.Name) })
	// AllowNet restricts the hosts http.send may reach; an empty list means
	// none, a second fence in case a future OPA adds another network builtin
	// that honours it.
	c.AllowNet = []string{}
	return c
}

// explainSandbox appends sandboxHint to the message of a compile error that
// names a sandboxed builtin.
func explainSandbox(msg string) string {
	const marker = "undefined function "
	i := strings.Index(msg, marker)
	if i < 0 {
		return msg
	}
	name := msg[i+len(marker):]
	if j := strings.IndexAny(name, " \n;"); j >= 0 {
		name = name[:j]
	}
	if !sandboxed(name) {
		return msg
	}
	return msg + sandboxHint
}
