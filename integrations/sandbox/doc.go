// Package sandbox runs work on content a tenant wrote (a chart's templates)
// in a child process of the controller's own binary, bounded in wall-clock
// time, CPU time, memory and output, so that a template that loops or
// builds a huge string costs one refused render, not the controller: Helm's
// template engine takes no context and no memory bound, and in-process it
// stalled every tenant's checks and crashed the controller past its memory
// limit (issue 39).
//
// The parent (Runner.Run) starts the binary with the hidden first argument
// Arg, the job's mode and its limits, writes the job as JSON on the child's
// standard input and reads one JSON answer from its standard output. The
// child (Main, called first thing in main and in the TestMain of packages
// whose tests render) sets its own resource limits before it reads a byte
// of the job, runs the handler registered for the mode and exits.
package sandbox
