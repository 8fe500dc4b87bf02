package app

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
)

// setupControllers registers claimwarden's controllers with mgr.
func setupControllers(mgr ctrl.Manager, cfg config.Config) error {
	selector, err := cfg.Selector()
	if err != nil {
		return err
	}
	err = rollout.SetupWithManager(mgr, rollout.Options{
		Namespaces:           cfg.Namespaces,
		LabelSelector:        selector,
		Strategy:             cfg.UpdateStrategy,
		MaxConcurrentPatches: cfg.MaxConcurrentPatches,
	})
	if err != nil {
		return fmt.Errorf("setting up the rollout controller: %w", err)
	}
	return nil
}
