package check

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/claimwarden/claimwarden/policies"
)

// peakRSSEnv, when set to a directory, makes the test binary check the
// files of checkFiles there once, as `claimwarden check` would (the
// policies compiled, the check run, the table written), print its peak
// resident memory and exit, instead of running the tests.
const peakRSSEnv = "CHECK_TEST_PEAK_RSS_OF"

func TestMain(m *testing.M) {
	if dir := os.Getenv(peakRSSEnv); dir != "" {
		os.Exit(printPeakRSS(dir))
	}
	os.Exit(m.Run())
}

// peakRSS is the peak resident memory, in bytes, of one check of the files
// in dir. It is measured in a process of its own, which does nothing else,
// so that it counts all the check makes resident (Go heap with the garbage
// collector's headroom, stacks, runtime, the binary's pages) and nothing of
// the benchmark's (its inputs, earlier iterations, other tests). The kernel
// keeps the high-water mark (VmHWM), so no peak between two samples is
// missed.
func peakRSS(b *testing.B, dir string) int64 {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), peakRSSEnv+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("checking in a process of its own: %v\n%s", err, stderr.String())
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		b.Fatalf("the checking process printed %q, not its peak RSS: %v", out, err)
	}
	return n
}

func printPeakRSS(dir string) int {
	engine, err := policies.New(context.Background(), policies.Options{PollInterval: -1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := checkFiles(engine, dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	n, err := vmHWM()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(n)
	return 0
}

// vmHWM is the process's peak resident set size in bytes (Linux).
func vmHWM() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("peak RSS is read from /proc/self/status (Linux): %w", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/self/status has no VmHWM line (err %v)", s.Err())
}
