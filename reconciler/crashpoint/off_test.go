//go:build !chaos

package crashpoint

import "testing"

// The binary users get never crashes on purpose, whatever its environment.
func TestOrdinaryBuildIgnoresTheVariable(t *testing.T) {
	passed, err := runChild(t, string(ClaimPatched))
	if err != nil || passed != 3 {
		t.Fatalf("child got past the step %d times and ended with %v; want 3 and a clean exit", passed, err)
	}
}
