// Package memory holds the test that the controller's memory stays flat
// however many commits it reports on: every per-commit memory (what was
// posted, logged or said) is bounded, and every per-StatefulSet one is
// forgotten with the StatefulSet.
package memory
