package sandbox

import (
	"fmt"
	"time"
)

// Limits bound one job. Zero fields take DefaultLimits' values.
type Limits struct {
	// Timeout is the wall-clock time a job may take, start-up included.
	Timeout time.Duration
	// CPU is the CPU time the child may use (RLIMIT_CPU): a loop that the
	// wall clock would stop later on a loaded machine stops here.
	CPU time.Duration
	// Memory is the private writable memory the child may add to what it
	// holds once started (RLIMIT_DATA): its heap. Address space (RLIMIT_AS)
	// is bounded too, more loosely, as Go reserves about a GiB of addresses
	// it never touches.
	Memory int64
	// Input and Output bound the job's JSON and the answer's.
	Input, Output int64
}

// DefaultLimits fit beside the controller in the shipped Deployment's
// 512Mi when Concurrency children run at once: a chart of a few MiB renders
// in well under a second and a few tens of MiB.
var DefaultLimits = Limits{
	Timeout: 30 * time.Second,
	CPU:     20 * time.Second,
	Memory:  128 << 20,
	Input:   64 << 20,
	Output:  16 << 20,
}

// DefaultConcurrency is how many children a Runner starts at once.
const DefaultConcurrency = 2

// addressSpaceSlack is the address space a child may map beyond Memory:
// the runtime's reservations, the binary's own mappings and thread stacks.
const addressSpaceSlack = 3 << 30

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.Timeout > 0 {
		d.Timeout = l.Timeout
	}
	if l.CPU > 0 {
		d.CPU = l.CPU
	}
	if l.Memory > 0 {
		d.Memory = l.Memory
	}
	if l.Input > 0 {
		d.Input = l.Input
	}
	if l.Output > 0 {
		d.Output = l.Output
	}
	return d
}

func (l Limits) String() string {
	return fmt.Sprintf("%s wall clock, %s CPU, %d MiB memory, %d MiB output", l.Timeout, l.CPU, l.Memory>>20, l.Output>>20)
}
