package policies

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"slices"
	"strings"
)

// module is one Rego file as the engine compiles it: name is what compile
// and runtime errors print ("policies/max_step.rego:12: ..."), so it says
// where the file came from (see the source files for each naming scheme).
type module struct {
	name string
	text string
}

// contribution is what one source adds to the policy set.
type contribution struct {
	// source names the source in errors (see shippedSource).
	source  string
	modules []module
	// data is merged into OPA's data document (rooted at data).
	data map[string]any
	// failure, when set, is why the source could not be read. The engine
	// then fails closed: every verdict is a denial quoting it.
	failure string
	// compileError is the part of failure that is a parse error, with
	// file:line, for Status.CompileError.
	compileError string
	// loading says failure only means the source has not been read yet:
	// expected at every start, so it is no error worth logging as one.
	loading bool
	// digest identifies modules, data and failure, so the engine can tell a
	// real change from a re-read of the same content without recompiling.
	digest string
}

// Source names of the embedded policies and of policies.dirs; ConfigMaps
// are "configmap/<namespace>/<name>" and bundles "bundle/<name>", the
// prefixes of their module names.
const (
	shippedSource = "policies"
	dirsSource    = "policies.dirs"
)

// newContribution sorts the modules (so the digest does not depend on
// directory or map order) and computes the digest.
func newContribution(source string, mods []module, data map[string]any, failure string) contribution {
	slices.SortFunc(mods, func(a, b module) int { return strings.Compare(a.name, b.name) })
	h := sha256.New()
	for _, m := range mods {
		// Lengths delimit the fields, so no two module sets hash alike.
		writeField(h, m.name)
		writeField(h, m.text)
	}
	if len(data) > 0 {
		// encoding/json sorts map keys: the encoding is canonical.
		b, err := json.Marshal(data)
		if err != nil {
			failure = strings.TrimSpace(failure + " data is not JSON: " + err.Error())
		}
		writeField(h, string(b))
	}
	writeField(h, failure)
	return contribution{source: source, modules: mods, data: data, failure: failure, digest: hex.EncodeToString(h.Sum(nil))}
}

// loadingContribution is the failure a source contributes until its first
// read: the engine fails closed meanwhile, but nothing is wrong yet.
func loadingContribution(source, why string) contribution {
	c := newContribution(source, nil, nil, why)
	c.loading = true
	return c
}

// writeField writes s preceded by its length.
func writeField(h io.Writer, s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	_, _ = h.Write(n[:])
	_, _ = io.WriteString(h, s)
}
