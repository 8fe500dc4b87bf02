package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/claimwarden/claimwarden/test/fluxenv"
)

// startFlux starts Gitea and Flux, and returns the controller's flags: the
// Flux integration (Kustomizations) on, and the configuration naming Gitea.
func startFlux(ctx context.Context, cl *cluster, out *printer) ([]string, error) {
	args, err := startGiteaAndFlux(ctx, cl, out)
	if err != nil {
		return nil, err
	}
	return slices.Concat([]string{"--flux", "--flux-artifact-cache-dir", filepath.Join(cl.env.Dir, "artifacts")}, args), nil
}

// startHelm starts Gitea and Flux, and returns the controller's flags: the
// HelmRelease integration on (it reads release records, not artifacts), and
// the configuration naming Gitea.
func startHelm(ctx context.Context, cl *cluster, out *printer) ([]string, error) {
	args, err := startGiteaAndFlux(ctx, cl, out)
	if err != nil {
		return nil, err
	}
	return append([]string{"--flux-helm-releases"}, args...), nil
}

// startGiteaAndFlux starts Gitea and Flux's controllers, and returns the
// controller's flags for the configuration naming Gitea.
func startGiteaAndFlux(ctx context.Context, cl *cluster, out *printer) ([]string, error) {
	args, err := startGitea(ctx, cl, out)
	if err != nil {
		return nil, err
	}
	f, err := fluxenv.Start(ctx, cl.env, fluxenv.Options{Dir: filepath.Join(cl.env.Dir, "flux")})
	if err != nil {
		return nil, err
	}
	cl.flux = f
	out.ok(fmt.Sprintf("Flux source-, kustomize- and helm-controller running, CRDs installed, ready in %s (logs in %s)",
		f.StartupTime.Round(100*time.Millisecond), f.Dir))
	return args, nil
}

// fluxHints says where to look at Flux and Git under -keep.
func fluxHints(cl *cluster, kubectl string, out *printer) {
	out.cmd(kubectl + " get gitrepository,kustomization -n " + fluxNamespace)
	repoHint(cl, out)
}

// helmHints says where to look at the HelmRelease, its release records and
// Git under -keep.
func helmHints(cl *cluster, kubectl string, out *printer) {
	out.cmd(kubectl + " get gitrepository,helmchart,helmrelease -n " + fluxNamespace)
	out.cmd(kubectl + " get secrets -l owner=helm -n " + fluxNamespace + "    # the release records claimwarden reads")
	repoHint(cl, out)
}

// repoHint says where the repository and its commit statuses are.
func repoHint(cl *cluster, out *printer) {
	out.note(fmt.Sprintf("the repository and its commit statuses, in a browser: %s/%s/%s/commits/branch/main", cl.gitea.URL, cl.gitea.User, repoName))
}
