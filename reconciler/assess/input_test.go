package assess

import (
	"strings"
	"testing"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/plan"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// NewInput derives what follows from the proposal, whoever asks: a
// re-create exactly when the templates differ, and the strategy of the
// StatefulSet's annotation over the asker's default.
func TestNewInputDerivesFromTheProposal(t *testing.T) {
	live := fixtures.StatefulSet("shop", "web", 2, "fast", "2Gi")
	grown := plan.WithTemplates(live, fixtures.StatefulSet("shop", "web", 2, "fast", "3Gi"))
	s := Settings{DefaultStrategy: v1alpha1.InPlace}

	same, err := NewInput(live, live, nil, nil, s, Cluster{})
	if err != nil || same.Recreate || same.Strategy != v1alpha1.InPlace {
		t.Errorf("same templates: recreate %v, strategy %q, %v; want no re-create, the default strategy", same.Recreate, same.Strategy, err)
	}
	live.Annotations = map[string]string{v1alpha1.UpdateStrategyAnnotation: string(v1alpha1.OnClaimDelete)}
	in, err := NewInput(live, grown, nil, nil, s, Cluster{InFlight: Growth{"requests.storage": 1}})
	if err != nil || !in.Recreate || in.Strategy != v1alpha1.OnClaimDelete || in.InFlight["requests.storage"] != 1 {
		t.Errorf("grown: recreate %v, strategy %q, in flight %v, %v; want a re-create under the annotation's strategy", in.Recreate, in.Strategy, in.InFlight, err)
	}
	live.Annotations[v1alpha1.UpdateStrategyAnnotation] = "Sideways"
	if _, err := NewInput(live, grown, nil, nil, s, Cluster{}); err == nil || !strings.Contains(err.Error(), "Sideways") {
		t.Errorf("bad annotation: %v; want an error naming its value", err)
	}
}
