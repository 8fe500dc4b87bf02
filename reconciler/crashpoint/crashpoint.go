// Package crashpoint lets the chaos run (test/e2e TestChaos) SIGKILL the
// controller at an exact step of a rollout, where a kill from outside could
// only land by luck: right after the journal write, the orphan delete, the
// re-create, or between two claim patches.
//
// It does nothing unless the binary is built with the build tag "chaos"
// (`make build-chaos`, bin/claimwarden-chaos); the binary users get has no
// such code. In a chaos build, $CHAOS_CRASH_AT = "<step>" or "<step>:<n>"
// makes the process SIGKILL itself the n-th time (default the first) it
// reaches that step.
package crashpoint

// Step names a point in a rollout.
type Step string

const (
	// JournalWritten: the re-create is recorded, nothing deleted yet.
	JournalWritten Step = "journal-written"
	// OrphanDeleted: the old StatefulSet's orphan delete was accepted.
	OrphanDeleted Step = "orphan-deleted"
	// Created: the new StatefulSet exists; the journal still holds the record.
	Created Step = "created"
	// ClaimPatched: one claim's patch was accepted, the next not sent yet.
	ClaimPatched Step = "claim-patched"
)

// Steps are every step, in the order a rollout reaches them.
var Steps = []Step{JournalWritten, OrphanDeleted, Created, ClaimPatched}

// Reached marks that the process reached step.
func Reached(step Step) { reached(step) }
