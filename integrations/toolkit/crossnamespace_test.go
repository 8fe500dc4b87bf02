package toolkit

import (
	"strings"
	"testing"
)

// A reference into another namespace is refused only under the lockdown;
// one into the object's own namespace, named or not, never.
func TestCrossNamespaceRefused(t *testing.T) {
	if err := CrossNamespaceRefused("tenant-a", "flux-system", true); err == nil || !strings.Contains(err.Error(), "flux.noCrossNamespaceRefs") || !strings.Contains(err.Error(), "namespace flux-system") {
		t.Errorf("a source in flux-system with the lockdown: %v, want refused, naming the namespace", err)
	}
	for _, ns := range []string{"", "tenant-a"} {
		if err := CrossNamespaceRefused("tenant-a", ns, true); err != nil {
			t.Errorf("source namespace %q: %v, want allowed", ns, err)
		}
	}
	if err := CrossNamespaceRefused("tenant-a", "flux-system", false); err != nil {
		t.Errorf("without the lockdown: %v, want allowed", err)
	}
}
