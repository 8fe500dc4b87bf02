package autoresize

import (
	"os"
	"testing"

	"github.com/claimwarden/claimwarden/integrations/gitedit"
	"github.com/claimwarden/claimwarden/integrations/sandbox"
)

// The test binary is the sandbox child of the charts its tests render.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

// testRenderer renders charts in sandbox children of the test binary.
func testRenderer(t *testing.T) gitedit.Renderer {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return gitedit.SandboxRenderer{Runner: sandbox.NewRunner(self, sandbox.Limits{}, 2)}
}
