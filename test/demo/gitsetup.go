package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/gitea"
)

// giteaTokenSecret holds the Gitea token claimwarden posts commit statuses
// with, in the namespace it reads Secrets from when run outside a Pod.
const giteaTokenSecret = "gitea-token"

// startGitea starts Gitea and gives claimwarden a Gitea token (in a Secret)
// and a configuration naming that Gitea. It returns the controller's flags
// for that configuration.
func startGitea(ctx context.Context, cl *cluster, out *printer) ([]string, error) {
	g, err := gitea.Start(ctx, filepath.Join(cl.env.Dir, "gitea"))
	if err != nil {
		return nil, err
	}
	cl.gitea = g
	out.ok(fmt.Sprintf("Gitea running at %s, ready in %s (data and log in %s)", g.URL, g.StartupTime.Round(100*time.Millisecond), g.Dir))
	path, err := writeControllerConfig(ctx, cl)
	if err != nil {
		return nil, err
	}
	out.ok(fmt.Sprintf("Secret %s/%s holds a Gitea token limited to write:repository; %s names Gitea for commit statuses",
		config.DefaultLeaderElectionNamespace, giteaTokenSecret, path))
	return []string{"--config", path}, nil
}

// writeControllerConfig creates a token that can write commit statuses and
// nothing more, stores it in a Secret of the controller's namespace, and
// writes the configuration file that points claimwarden at Gitea with it.
func writeControllerConfig(ctx context.Context, cl *cluster) (string, error) {
	token, err := cl.gitea.CreateToken(ctx, "claimwarden-statuses", "write:repository")
	if err != nil {
		return "", err
	}
	if err := controllerSecret(ctx, cl, giteaTokenSecret, token); err != nil {
		return "", err
	}
	path := configPath(cl)
	body := fmt.Sprintf("gitStatus:\n  hosts:\n  - url: %s\n    type: gitea\n    tokenSecretRef: {name: %s}\n", cl.gitea.URL, giteaTokenSecret)
	return path, os.WriteFile(path, []byte(body), 0o600)
}

// configPath is the controller's configuration file, which stories may
// extend after writeControllerConfig.
func configPath(cl *cluster) string { return filepath.Join(cl.env.Dir, "claimwarden.yaml") }

// controllerSecret stores token under the key "token" in Secret name of the
// controller's namespace, creating the namespace first if need be.
func controllerSecret(ctx context.Context, cl *cluster, name, token string) error {
	ns := config.DefaultLeaderElectionNamespace
	if err := fixtures.Namespace(ctx, cl.client, ns); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	return cl.client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		StringData: map[string]string{"token": token},
	})
}
