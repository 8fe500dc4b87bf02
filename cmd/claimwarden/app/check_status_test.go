package app

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/integrations/commitstatus"
	"github.com/claimwarden/claimwarden/integrations/prcomment"
	"github.com/claimwarden/claimwarden/test/gitea"
)

// TestCheckOnGitea runs check for a pull request on a real Gitea: the
// verdicts land on its head commit under the contexts the controller
// uses, and the plan is one comment, edited in place on the next run.
func TestCheckOnGitea(t *testing.T) {
	srv := gitea.StartT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cloneURL, err := srv.CreateRepo(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	files := func(dir string) map[string]string {
		out := map[string]string{}
		for _, name := range []string{"small.yaml", "big.yaml"} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			out["deploy/"+name] = string(b)
		}
		return out
	}
	if _, err := srv.PushCommit(ctx, "shop", files("testdata/check/grow/base"), "the databases"); err != nil {
		t.Fatal(err)
	}
	if err := srv.CreateBranch(ctx, "shop", "grow", "main"); err != nil {
		t.Fatal(err)
	}
	sha, err := srv.PushCommitTo(ctx, "shop", "grow", files("testdata/check/grow/pr"), "grow the databases")
	if err != nil {
		t.Fatal(err)
	}
	pr, err := srv.CreatePullRequest(ctx, "shop", "grow", "main", "Grow the databases")
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
	// The controller names its statuses with commitstatus.StatusContext and
	// the configured prefix, by default config's.
	controllerContext := func(prefix, name string) string { return commitstatus.StatusContext(prefix, "shop", name) }
	defaultPrefix := config.Default().GitStatus.ContextPrefix

	// The host is not configured: --git-host-type says it is a Gitea.
	code, out := runCheckCLI(t, []string{tokenEnv + "=" + srv.Token},
		"-f", "testdata/check/grow/pr", "--base", "testdata/check/grow/base",
		"--post-status", "--revision", sha, "--repository", cloneURL, "--git-host-type", "gitea",
		"--git-status-target-url", "https://ci.example.com/jobs/7",
		"--comment", "--pr", strconv.Itoa(pr))
	if code != exitDenied {
		t.Fatalf("exit code %d, want %d:\n%s", code, exitDenied, out)
	}
	got := statuses()
	if keys := sortedKeys(got); strings.Join(keys, " ") != controllerContext(defaultPrefix, "big")+" "+controllerContext(defaultPrefix, "small") {
		t.Fatalf("contexts %v, want the controller's for shop/big and shop/small", keys)
	}
	big, small := got[controllerContext(defaultPrefix, "big")], got[controllerContext(defaultPrefix, "small")]
	if big.State != "failure" || !strings.HasPrefix(big.Description, "max-step: claim data-big-0 (StatefulSet shop/big): 10Gi → 40Gi is +300%") || big.TargetURL != "https://ci.example.com/jobs/7" {
		t.Errorf("shop/big status %+v, want failure naming data-big-0 and max-step, linking the job", big)
	}
	if small.State != "success" || small.Description != "allowed: 2 claims, data 10Gi → 15Gi" {
		t.Errorf("shop/small status %+v, want success", small)
	}
	if !strings.Contains(out, "claimwarden: posted 2 commit statuses on "+sha) {
		t.Errorf("the statuses posted are not reported:\n%s", out)
	}
	comment := onlyComment(t, srv, ctx, pr, defaultPrefix)
	if !strings.Contains(comment.Body, "### ❌ claimwarden check: denied") || !strings.Contains(comment.Body, "| `shop/big` | `data-big-0` | 10Gi | 40Gi | ❌ denied | max-step:") {
		t.Errorf("comment:\n%s\nwant the Markdown plan", comment.Body)
	}

	// From the controller's configuration: the host and the context prefix;
	// a parameter lets the larger step through.
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

	// The next run edits the comment instead of adding one.
	code, out = runCheckCLI(t, []string{tokenEnv + "=" + srv.Token}, "-f", "testdata/check/grow/pr", "--base", "testdata/check/grow/base",
		"--param", "max_step_percent=400", "--repository", cloneURL, "--git-host-type", "gitea", "--comment", "--pr", strconv.Itoa(pr))
	if code != exitOK {
		t.Fatalf("exit code %d, want 0:\n%s", code, out)
	}
	edited := onlyComment(t, srv, ctx, pr, defaultPrefix)
	if edited.ID != comment.ID || !strings.Contains(edited.Body, "### ✅ claimwarden check: allowed") {
		t.Errorf("comment %d:\n%s\nwant comment %d edited to the allowed plan", edited.ID, edited.Body, comment.ID)
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

// onlyComment returns the one comment of the pull request, which must carry
// the marker of key.
func onlyComment(t *testing.T, srv *gitea.Server, ctx context.Context, pr int, key string) gitea.Comment {
	t.Helper()
	comments, err := srv.IssueComments(ctx, "shop", pr)
	if err != nil {
		t.Fatal(err)
	}
	if len(comments) != 1 || !strings.HasPrefix(comments[0].Body, prcomment.Marker(key)) {
		t.Fatalf("comments %+v, want one starting with %s", comments, prcomment.Marker(key))
	}
	return comments[0]
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
