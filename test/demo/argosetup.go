package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/test/argoenv"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

const (
	// argoAccount is the Argo CD account claimwarden calls the API as;
	// argoTokenSecret holds its token in the controller's namespace.
	argoAccount     = "claimwarden"
	argoTokenSecret = "argocd-token"
	// argoSettingsTimeout bounds the wait for argocd-server to see the
	// account, its token and its role: it reads its ConfigMaps and Secret
	// through informers, within a second.
	argoSettingsTimeout = 30 * time.Second
)

// argoPolicy is docs/argocd.md's least-privilege role for claimwarden: read
// Applications (their managed resources) and sync them.
const argoPolicy = `p, role:claimwarden, applications, get, */*, allow
p, role:claimwarden, applications, sync, */*, allow
g, claimwarden, role:claimwarden
`

// startArgo starts Gitea and Argo CD, gives claimwarden an Argo CD account
// and token, and returns the controller's flags: the Argo CD integration on,
// its server and token, and the configuration naming Gitea.
func startArgo(ctx context.Context, cl *cluster, out *printer) ([]string, error) {
	args, err := startGitea(ctx, cl, out)
	if err != nil {
		return nil, err
	}
	a, err := argoenv.Start(ctx, cl.env, argoenv.Options{Dir: filepath.Join(cl.env.Dir, "argocd")})
	if err != nil {
		return nil, err
	}
	cl.argo = a
	out.ok(fmt.Sprintf("Argo CD (Redis, repo-server, application-controller, server at %s) running, CRDs installed, ready in %s (logs in %s)",
		a.ServerURL, a.StartupTime.Round(100*time.Millisecond), a.Dir))

	start := time.Now()
	token, err := argoToken(ctx, cl)
	if err != nil {
		return nil, err
	}
	if err := controllerSecret(ctx, cl, argoTokenSecret, token); err != nil {
		return nil, err
	}
	out.ok(fmt.Sprintf("Argo CD account %s may get and sync Applications, nothing else; Secret %s/%s holds its API token (%s)",
		argoAccount, config.DefaultLeaderElectionNamespace, argoTokenSecret, since(start)))
	return slices.Concat([]string{
		"--argocd", "--argocd-namespaces", a.Namespace, "--argocd-server", a.ServerURL,
		"--argocd-plaintext", "--argocd-token-secret-name", argoTokenSecret,
	}, args), nil
}

// argoToken does what docs/argocd.md asks of an Argo CD admin: an API-key
// account for claimwarden in argocd-cm, its role in argocd-rbac-cm, and a
// token (`argocd account generate-token`). It returns once argocd-server
// lets that token get and sync the story's Application.
func argoToken(ctx context.Context, cl *cluster) (string, error) {
	a := cl.argo
	for name, data := range map[string]map[string]string{
		"argocd-cm":      {"accounts." + argoAccount: "apiKey"},
		"argocd-rbac-cm": {"policy.csv": argoPolicy},
	} {
		patch, err := json.Marshal(map[string]any{"data": data})
		if err != nil {
			return "", err
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: a.Namespace, Name: name}}
		if err := cl.client.Patch(ctx, cm, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return "", fmt.Errorf("ConfigMap %s/%s: %w", a.Namespace, name, err)
		}
	}
	var token string
	var last error
	err := wait.PollUntilContextTimeout(ctx, fixtures.Poll, argoSettingsTimeout, true, func(ctx context.Context) (bool, error) {
		if token == "" {
			var created struct {
				Token string `json:"token"`
			}
			path := "/api/v1/account/" + argoAccount + "/token"
			if last = a.API(ctx, http.MethodPost, path, map[string]string{"name": argoAccount}, &created); last != nil {
				return false, nil // the account is not in argocd-server's settings yet
			}
			token = created.Token
		}
		for _, action := range []string{"get", "sync"} {
			if last = canI(ctx, a.ServerURL, token, action); last != nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return "", fmt.Errorf("argocd account %s: no token allowed to get and sync Applications within %s (last: %v): %w", argoAccount, argoSettingsTimeout, last, err)
	}
	return token, nil
}

// canI asks argocd-server, as the bearer of token, whether it may do action
// on the story's Application (`argocd account can-i`).
func canI(ctx context.Context, server, token, action string) error {
	u := server + "/api/v1/account/can-i/applications/" + url.PathEscape(action) + "/default/" + repoName
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var answer struct {
		Value string `json:"value"`
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if answer.Value != "yes" {
		return fmt.Errorf("account %s may not %s applications: %q", argoAccount, action, answer.Value)
	}
	return nil
}

// argoHints says where to look at Argo CD and Git under -keep: the
// argocd binary of the test environment is also Argo CD's CLI (its web UI
// is not built). Its login is kept with Argo CD's data, not in ~/.config.
func argoHints(cl *cluster, kubectl string, out *printer) {
	out.cmd(kubectl + " get applications -n " + cl.argo.Namespace)
	cli := filepath.Join(cl.env.BinDir, "argocd") + " --config " + filepath.Join(cl.argo.Dir, "cli-config")
	out.cmd(fmt.Sprintf("%s login %s --plaintext --username %s --password %s", cli, strings.TrimPrefix(cl.argo.ServerURL, "http://"), argoenv.AdminUser, cl.argo.AdminPassword))
	out.cmd(fmt.Sprintf("%s app get %s --show-operation", cli, repoName))
	out.note(fmt.Sprintf("the repository and its commit statuses, in a browser: %s/%s/%s/commits/branch/main", cl.gitea.URL, cl.gitea.User, repoName))
}
