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
// Flux integration on, and the configuration naming Gitea.
func startFlux(ctx context.Context, cl *cluster, out *printer) ([]string, error) {
	args, err := startGitea(ctx, cl, out)
	if err != nil {
		return nil, err
	}
	f, err := fluxenv.Start(ctx, cl.env, fluxenv.Options{Dir: filepath.Join(cl.env.Dir, "flux")})
	if err != nil {
		return nil, err
	}
	cl.flux = f
	out.ok(fmt.Sprintf("Flux source-controller and kustomize-controller running, CRDs installed, ready in %s (logs in %s)",
		f.StartupTime.Round(100*time.Millisecond), f.Dir))
	return slices.Concat([]string{"--flux", "--flux-artifact-cache-dir", filepath.Join(cl.env.Dir, "artifacts")}, args), nil
}

// fluxHints says where to look at Flux and Git under -keep.
func fluxHints(cl *cluster, kubectl string, out *printer) {
	out.cmd(kubectl + " get gitrepository,kustomization -n " + fluxNamespace)
	out.note(fmt.Sprintf("the repository and its commit statuses, in a browser: %s/%s/%s/commits/branch/main", cl.gitea.URL, cl.gitea.User, repoName))
}
