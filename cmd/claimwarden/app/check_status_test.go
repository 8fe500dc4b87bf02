package app

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/integrations/gitstatus"
	"github.com/claimwarden/claimwarden/test/gitea"
)

// TestCheckPostsStatuses runs check --post-status against a real Gitea: the
// verdicts land on the commit under the contexts the controller uses.
func TestCheckPostsStatuses(t *testing.T) {
	srv := gitea.StartT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cloneURL, err := srv.CreateRepo(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, name := range []string{"small.yaml", "big.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata/check/grow/pr", name))
		if err != nil {
			t.Fatal(err)
		}
		files["deploy/"+name] = string(b)
	}
	sha, err := srv.PushCommit(ctx, "shop", files, "grow the databases")
	if err != nil {
		t.Fatal(err)
	}
	statuses := func() map[string]gitea.CommitStatus {
		t.Helper()
		_, list, err := srv.CombinedStatus(ctx, "shop", sha)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]gitea.CommitStatus{}
		for _, s := range list {
			out[s.Context] = s
		}
		return out
	}
	// The controller names its statuses with gitstatus.StatusContext and
	// the configured prefix, by default config's.
	controllerContext := func(prefix, name string) string { return gitstatus.StatusContext(prefix, "shop", name) }
	defaultPrefix := config.Default().GitStatus.ContextPrefix

	// The host is not configured: --git-host-type says it is a Gitea.
	code, out := runCheckCLI(t, []string{tokenEnv + "=" + srv.Token},
		"-f", "testdata/check/grow/pr", "--base", "testdata/check/grow/base",
		"--post-status", "--revision", sha, "--repository", cloneURL, "--git-host-type", "gitea",
		"--git-status-target-url", "https://ci.example.com/jobs/7")
	if code != exitDenied {
		t.Fatalf("exit code %d, want %d:\n%s", code, exitDenied, out)
	}
	got := statuses()
	if keys := sortedKeys(got); strings.Join(keys, " ") != controllerContext(defaultPrefix, "big")+" "+controllerContext(defaultPrefix, "small") {
		t.Fatalf("contexts %v, want the controller's for shop/big and shop/small", keys)
	}
	big, small := got[controllerContext(defaultPrefix, "big")], got[controllerContext(defaultPrefix, "small")]
	if big.State != "failure" || !strings.HasPrefix(big.Description, "data-big-0: max-step: claim data-big-0 (StatefulSet shop/big): 10Gi → 40Gi is +300%") || big.TargetURL != "https://ci.example.com/jobs/7" {
		t.Errorf("shop/big status %+v, want failure naming data-big-0 and max-step, linking the job", big)
	}
	if small.State != "success" || small.Description != "allowed: 2 claims, data 10Gi → 15Gi" {
		t.Errorf("shop/small status %+v, want success", small)
	}

	// From the controller's configuration: the host and the context prefix.
	tokenFile := writeFile(t, "token", srv.Token+"\n")
	cfg := writeFile(t, "config.yaml", `gitStatus:
  contextPrefix: claimwarden/prod-eu
  hosts:
  - url: `+srv.URL+`
    type: gitea
    tokenSecretRef: {name: gitea-token}
`)
	code, out = runCheckCLI(t, nil, "-f", "testdata/check/grow/pr", "--base", "testdata/check/grow/base",
		"--config", cfg, "--param", "max_step_percent=400",
		"--post-status", "--revision", sha, "--repository", cloneURL, "--git-token-file", tokenFile)
	if code != exitOK {
		t.Fatalf("exit code %d, want 0:\n%s", code, out)
	}
	got = statuses()
	for _, name := range []string{"big", "small"} {
		if s := got[controllerContext("claimwarden/prod-eu", name)]; s.State != "success" {
			t.Errorf("status %s = %+v, want success", controllerContext("claimwarden/prod-eu", name), s)
		}
	}
	if len(got) != 4 {
		t.Errorf("contexts %v, want the two of the first run and two under claimwarden/prod-eu", sortedKeys(got))
	}

	// A token Gitea refuses: exit 2, naming the context.
	const badToken = "not-the-token-5f3a"
	code, out = runCheckCLI(t, []string{tokenEnv + "=" + badToken}, "-f", "testdata/check/grow/pr", "--base", "testdata/check/grow/base",
		"--post-status", "--revision", sha, "--repository", cloneURL, "--git-host-type", "gitea")
	if code != exitCheckInput || !strings.Contains(out, "commit status claimwarden/shop/big: ") || !strings.Contains(out, "401") {
		t.Errorf("exit code %d, want %d naming the context and Gitea's 401:\n%s", code, exitCheckInput, out)
	}
	if strings.Contains(out, badToken) {
		t.Errorf("the token appears in the output:\n%s", out)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
