package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// Arg is the first argument that makes the binary a sandbox child.
const Arg = "__claimwarden-sandbox"

// Handler does one job in the child: job is its JSON; the result is encoded
// as the answer. It runs under the child's limits, so it may parse and run
// what a tenant wrote.
type Handler func(job []byte) (any, error)

// handlers are the registered modes. Filled by init functions only, before
// main runs: no lock.
var handlers = map[string]Handler{}

// Register makes the jobs of mode run fn in the child. Call it from an init
// function of the package that owns the work, so that every binary that
// can start such a job can also be its child.
func Register(mode string, fn Handler) {
	if _, ok := handlers[mode]; ok {
		panic("sandbox: mode " + mode + " registered twice")
	}
	handlers[mode] = fn
}

// answer is the child's one line of output.
type answer struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// Main runs the job and exits when the process was started as a sandbox
// child (its first argument is Arg); otherwise it returns at once. Call it
// first thing in main, and in TestMain where tests start jobs.
func Main() {
	if len(os.Args) < 2 || os.Args[1] != Arg {
		return
	}
	os.Exit(child(os.Args[2:], os.Stdin, os.Stdout))
}

// child confines the process, reads the job and writes the answer; the
// exit code says whether an answer was written (0) or not.
func child(args []string, in io.Reader, out io.Writer) int {
	if len(args) != 4 {
		fmt.Fprintf(os.Stderr, "sandbox: want mode, memory, cpu and input arguments, got %q\n", args)
		return 2
	}
	mode := args[0]
	memory, err1 := strconv.ParseInt(args[1], 10, 64)
	cpu, err2 := strconv.ParseInt(args[2], 10, 64)
	input, err3 := strconv.ParseInt(args[3], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || memory <= 0 || cpu <= 0 || input <= 0 {
		fmt.Fprintf(os.Stderr, "sandbox: bad limits %q\n", args[1:])
		return 2
	}
	// Confined before the first byte of the job is read: nothing the
	// tenant wrote runs unbounded, even its decoding.
	if err := confine(memory, time.Duration(cpu)*time.Second); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: %v\n", err)
		return 3
	}
	fn := handlers[mode]
	if fn == nil {
		return reply(out, nil, fmt.Errorf("sandbox: no handler for mode %q in this binary", mode))
	}
	job, err := io.ReadAll(io.LimitReader(in, input+1))
	if err == nil && int64(len(job)) > input {
		err = fmt.Errorf("sandbox: the job has more than %d bytes", input)
	}
	if err != nil {
		return reply(out, nil, err)
	}
	result, err := fn(job)
	return reply(out, result, err)
}

// reply writes the answer: result, or err when not nil.
func reply(out io.Writer, result any, err error) int {
	var a answer
	if err != nil {
		a.Error = err.Error()
	} else if a.Result, err = json.Marshal(result); err != nil {
		a = answer{Error: "sandbox: encoding the result: " + err.Error()}
	}
	if err := json.NewEncoder(out).Encode(a); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: writing the answer: %v\n", err)
		return 4
	}
	return 0
}
