// Package policies holds the Rego policies claimwarden ships (each .rego
// beside its _test.rego, package claimwarden.claims) and the engine that
// loads policies from those defaults, directories, OPA bundles and labelled
// ConfigMaps and evaluates them, failing closed, for every claim change.
package policies
