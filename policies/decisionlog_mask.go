package policies

import (
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
)

// maskPointer is what OPA's decision-log masking can remove: a JSON
// pointer into the event's input, result or non-deterministic builtin
// cache.
var maskPointer = regexp.MustCompile(`^/(input|result|nd_builtin_cache)(/[^/]+)*$`)

// maskModule is the decision-log plugin's mask policy for pointers (OPA's
// default mask_decision, data.system.log.mask), or nil without pointers. It
// lives in the plugin's own policy set, apart from the claim policies,
// which no policy source can reach.
func maskModule(pointers []string) (*loader.RegoFile, error) {
	if len(pointers) == 0 {
		return nil, nil
	}
	for _, p := range pointers {
		if !maskPointer.MatchString(p) {
			return nil, fmt.Errorf("policies.decisionLogMask: %q is not a JSON pointer into /input, /result or /nd_builtin_cache", p)
		}
	}
	list, err := json.Marshal(pointers)
	if err != nil {
		return nil, fmt.Errorf("policies.decisionLogMask: %w", err)
	}
	const name = "claimwarden/decision-log-mask.rego"
	text := "package system.log\n\nmask contains p if some p in " + string(list) + "\n"
	parsed, err := ast.ParseModuleWithOpts(name, text, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		return nil, fmt.Errorf("policies.decisionLogMask: %w", err)
	}
	return &loader.RegoFile{Name: name, Parsed: parsed, Raw: []byte(text)}, nil
}
