package fluxenv

import (
	"strings"
	"testing"
)

func TestCheckBinaries(t *testing.T) {
	err := checkBinaries(t.TempDir())
	if err == nil {
		t.Fatal("checkBinaries of an empty directory: no error")
	}
	for _, want := range []string{sourceBin, kustomizeBin, helmBin, crdDir, "make testenv"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("checkBinaries error %q does not mention %q", err, want)
		}
	}
}
