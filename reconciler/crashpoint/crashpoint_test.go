package crashpoint

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// childEnv makes the re-executed test binary reach ClaimPatched three times,
// saying so on stdout after each.
const childEnv = "CRASHPOINT_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		for i := 1; i <= 3; i++ {
			Reached(ClaimPatched)
			os.Stdout.WriteString("passed\n")
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runChild runs the child with $CHAOS_CRASH_AT = spec and returns how many
// times it got past the step and how it ended.
func runChild(t *testing.T, spec string) (int, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=1", "CHAOS_CRASH_AT="+spec)
	out, err := cmd.Output()
	return strings.Count(string(out), "passed"), err
}
