package policies

import (
	"fmt"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// The engine queries these rules; every source may add to them.
const (
	claimsPackage = "data.claimwarden.claims"
	confineCode   = "claimwarden_confinement_error"
)

// reservedRoots are the data roots no added source may define: the engine
// publishes policies.params under data.claimwarden, and OPA reserves
// data.system.
var reservedRoots = []string{"claimwarden", "system"}

// owned is a path of data one source defines: a rule, a library package or
// a data document. No other source may define anything at, above or below
// it, so no source can change what another one's rules decide.
type owned struct {
	path   []string
	what   string // "rule params", "package org.lib", "data.org"
	source string
	loc    *ast.Location
}

// confine checks that the added sources (all but the shipped one) can only
// add denials and warnings, as Gatekeeper confines template Rego: modules
// in package claimwarden.claims add partial-set deny/warn rules and helpers
// of their own, library packages live outside the reserved roots and
// define no deny/warn (nothing would consult them), data stays out of
// data.claimwarden, and no source defines what the shipped policies or
// another source define. Whatever it finds is returned as errors naming
// source, file, line and rule.
func confine(contribs []contribution, mods map[string]*ast.Module) []string {
	var errs []string
	var taken []owned
	for _, s := range contribs {
		var mine []owned
		shipped := s.source == shippedSource
		contributes := false
		for _, m := range s.modules {
			mod := mods[m.name]
			pkg := refPath(mod.Package.Path)
			pkgName := strings.Join(pkg[1:], ".")
			inClaims := strings.Join(pkg, ".") == claimsPackage
			if !shipped && !inClaims && slices.Contains(reservedRoots, pkg[1]) {
				errs = append(errs, confineError(mod.Package.Location,
					"package %s is reserved: added policies must be in package claimwarden.claims, helpers in a library package outside claimwarden", pkgName))
				continue
			}
			if !inClaims {
				mine = append(mine, owned{path: pkg, what: "package " + pkgName, source: s.source, loc: mod.Package.Location})
			}
			for _, r := range mod.Rules {
				ref := r.Head.Ref()
				name := ref[0].Value.String()
				if name == "deny" || name == "warn" {
					if shipped {
						continue
					}
					switch {
					case !inClaims:
						errs = append(errs, confineError(r.Location,
							"%s in package %s is never consulted: claimwarden queries data.claimwarden.claims.deny/warn", name, pkgName))
					case len(ref) != 1 || r.Head.RuleKind() != ast.MultiValue || r.Default:
						errs = append(errs, confineError(r.Location,
							"%s must be a partial set rule (%s contains ... if ...)", name, name))
					default:
						contributes = true
					}
					continue
				}
				if inClaims {
					mine = append(mine, owned{path: append(slices.Clone(pkg), staticPath(ref)...), what: "rule " + ref.String(), source: s.source, loc: r.Location})
				}
			}
		}
		for k := range s.data {
			if !shipped && slices.Contains(reservedRoots, k) {
				errs = append(errs, fmt.Sprintf("%s: data.%s is reserved for the engine (policies.params are data.claimwarden.params)", s.source, k))
				continue
			}
			mine = append(mine, owned{path: []string{"data", k}, what: "data." + k, source: s.source})
		}
		if !shipped && len(s.modules) > 0 && !contributes {
			errs = append(errs, fmt.Sprintf("%s defines no deny or warn rule in package claimwarden.claims: none of its policies would be consulted", s.source))
		}
		for _, o := range mine {
			if other, ok := overlapping(taken, o); ok {
				errs = append(errs, confineOverlap(o, other))
			}
		}
		taken = append(taken, mine...)
	}
	return errs
}

func confineError(loc *ast.Location, format string, args ...any) string {
	return ast.NewError(confineCode, loc, format, args...).Error()
}

// confineOverlap describes o colliding with other, which an earlier source
// (or the shipped policies) defines.
func confineOverlap(o, other owned) string {
	by := other.source
	if by == shippedSource {
		by = "the shipped policies"
	}
	if other.loc != nil {
		by += fmt.Sprintf(" (%s)", other.loc)
	}
	msg := fmt.Sprintf("%s conflicts with %s, defined by %s; added sources may only add deny/warn rules and definitions of their own", o.what, other.what, by)
	if o.loc == nil {
		return o.source + ": " + msg
	}
	return ast.NewError(confineCode, o.loc, "%s", msg).Error()
}

// overlapping finds an entry of another source at, above or below o.
func overlapping(taken []owned, o owned) (owned, bool) {
	for _, t := range taken {
		if t.source == o.source {
			continue
		}
		n := min(len(t.path), len(o.path))
		if slices.Equal(t.path[:n], o.path[:n]) {
			return t, true
		}
	}
	return owned{}, false
}

// refPath is a package path as strings: ["data", "claimwarden", "claims"].
func refPath(r ast.Ref) []string {
	out := []string{r[0].Value.String()}
	return append(out, staticPath(r[1:])...)
}

// staticPath is the leading part of a rule head that names a fixed path:
// params.max_step_percent is [params max_step_percent], p[x] is [p].
func staticPath(r ast.Ref) []string {
	var out []string
	for i, t := range r {
		switch v := t.Value.(type) {
		case ast.Var:
			if i > 0 {
				return out
			}
			out = append(out, string(v))
		case ast.String:
			out = append(out, string(v))
		default:
			return out
		}
	}
	return out
}
