// Package reconciler holds the core of claimwarden, in its subpackages:
// proposal (desired StatefulSets and where they came from), source (the one
// API GitOps watchers publish proposals through), diff, plan, gate,
// converge, rollout (the controller) and outcome (the records sinks read).
// The core imports no package under integrations/; layering_test.go
// enforces it. docs/architecture.md draws the whole flow.
package reconciler
