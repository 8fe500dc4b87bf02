package app

import (
	"slices"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/integrations/flux"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// Flux's two tools are asked about StatefulSets at rest whichever of them
// is enabled (autoresize finds a HelmRelease's Kustomization, and a
// StatefulSet's HelmRelease), and only the enabled one is watched.
func TestFluxToolsAreKnownWhenEitherIsWatched(t *testing.T) {
	for name, f := range map[string]config.Flux{
		"kustomizations": {Enabled: true},
		"helmReleases":   {HelmReleases: true},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := config.Config{Flux: f}
			opts, err := managerOptions(cfg)
			if err != nil {
				t.Fatal(err)
			}
			// Controller names are process-wide: the second case registers them again.
			opts.Controller.SkipNameValidation = ptr.To(true)
			// Nothing is started: the manager never reaches this address.
			mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, opts)
			if err != nil {
				t.Fatal(err)
			}
			tools, err := newTools(mgr, cfg, proposal.NewStore(), &flux.Fetcher{}, outcome.Recorder{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, a := range tools.AtRest() {
				kinds = append(kinds, a.Kind())
			}
			if !slices.Equal(kinds, []string{"Kustomization", "HelmRelease"}) {
				t.Errorf("tools asked at rest: %v, want Kustomization, HelmRelease", kinds)
			}
			nudgers, err := tools.SetupWithManager(mgr)
			if err != nil || len(nudgers) != 1 {
				t.Errorf("watched: %d, %v; want the one enabled", len(nudgers), err)
			}
		})
	}
}
