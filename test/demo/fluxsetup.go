package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/fluxenv"
	"github.com/claimwarden/claimwarden/test/gitea"
)

// tokenSecret holds the Gitea token claimwarden posts commit statuses with,
// in the namespace it reads Secrets from when run outside a Pod.
const tokenSecret = "gitea-token"

// startGitOps starts Gitea and Flux, and gives claimwarden a Gitea token (in a
// Secret) and a configuration naming that Gitea. It returns the controller's
// flags: the Flux integration on, and that configuration.
func startGitOps(ctx context.Context, cl *cluster, out *printer) ([]string, error) {
	g, err := gitea.Start(ctx, filepath.Join(cl.env.Dir, "gitea"))
	if err != nil {
		return nil, err
	}
	cl.gitea = g
	out.ok(fmt.Sprintf("Gitea running at %s, ready in %s (data and log in %s)", g.URL, g.StartupTime.Round(100*time.Millisecond), g.Dir))

	f, err := fluxenv.Start(ctx, cl.env, fluxenv.Options{Dir: filepath.Join(cl.env.Dir, "flux")})
	if err != nil {
		return nil, err
	}
	cl.flux = f
	out.ok(fmt.Sprintf("Flux source-controller and kustomize-controller running, CRDs installed, ready in %s (logs in %s)",
		f.StartupTime.Round(100*time.Millisecond), f.Dir))

	path, err := writeControllerConfig(ctx, cl)
	if err != nil {
		return nil, err
	}
	out.ok(fmt.Sprintf("Secret %s/%s holds a Gitea token limited to write:repository; %s names Gitea for commit statuses",
		config.DefaultLeaderElectionNamespace, tokenSecret, path))
	return []string{"--flux", "--flux-artifact-cache-dir", filepath.Join(cl.env.Dir, "artifacts"), "--config", path}, nil
}

// writeControllerConfig creates a token that can write commit statuses and
// nothing more, stores it in a Secret of the controller's namespace, and
// writes the configuration file that points claimwarden at Gitea with it.
func writeControllerConfig(ctx context.Context, cl *cluster) (string, error) {
	token, err := cl.gitea.CreateToken(ctx, "claimwarden-statuses", "write:repository")
	if err != nil {
		return "", err
	}
	ns := config.DefaultLeaderElectionNamespace
	if err := fixtures.Namespace(ctx, cl.client, ns); err != nil {
		return "", err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tokenSecret},
		StringData: map[string]string{"token": token},
	}
	if err := cl.client.Create(ctx, secret); err != nil {
		return "", err
	}
	path := filepath.Join(cl.env.Dir, "claimwarden.yaml")
	body := fmt.Sprintf("gitStatus:\n  hosts:\n  - url: %s\n    type: gitea\n    tokenSecretRef: {name: %s}\n", cl.gitea.URL, tokenSecret)
	return path, os.WriteFile(path, []byte(body), 0o600)
}

// fluxHints says where to look at Flux and Git under -keep.
func fluxHints(cl *cluster, kubectl string, out *printer) {
	out.cmd(kubectl + " get gitrepository,kustomization -n " + fluxNamespace)
	out.note(fmt.Sprintf("the repository and its commit statuses, in a browser: %s/%s/%s/commits/branch/main", cl.gitea.URL, cl.gitea.User, repoName))
}
