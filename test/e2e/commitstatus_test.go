package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/gitea"
)

// The commit that proposed a rollout shows its outcome: success for an
// allowed bump, failure naming the policy and the claim for a denied one —
// read back from a real Gitea, posted by the binary running as its
// ServiceAccount with the token from a Secret.
func TestCommitStatusesOnGitea(t *testing.T) {
	cl := started(t)
	ctx := context.Background()
	g := startGitea(t)
	repoURL, err := g.CreateRepo(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	commit := func(size string) string {
		t.Helper()
		sha, err := g.PushCommit(ctx, "shop", map[string]string{"web.yaml": "storage: " + size + "\n"}, "storage "+size)
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}

	ns := namespace(t, cl.admin)
	ctl := startController(t, cl, "controller", "--config", giteaConfig(t, cl, g.URL, g.Token, "gitea-token"))
	statusCtx := "claimwarden/" + ns + "/web"

	first := commit("1Gi")
	sts := fixtures.StatefulSet(ns, "web", 2, class, "1Gi")
	// A clone URL with credentials in it, as users paste them: the statuses
	// still reach the commit, and the password reaches no log, event, status
	// or VolumeClaimRollout (checkNoLeaks).
	withUserinfo, err := url.Parse(repoURL)
	if err != nil {
		t.Fatal(err)
	}
	withUserinfo.User = url.UserPassword(g.User, g.Password)
	sts.Annotations = map[string]string{v1alpha1.RepositoryAnnotation: withUserinfo.String(), v1alpha1.RevisionAnnotation: "main@sha1:" + first}
	createReady(t, cl.admin, sts)
	waitStatus(t, g, "shop", first, statusCtx, "success", "2/2 claims compatible", ctl)

	// An allowed bump (+100%) ends in success on its own commit.
	allowed := commit("2Gi")
	replace(t, cl.admin, sts, "2Gi", allowed)
	waitRolloutDone(t, cl.admin, client.ObjectKeyFromObject(sts), 2, "2Gi", ctl)
	waitStatus(t, g, "shop", allowed, statusCtx, "success", "2/2 claims compatible", ctl)

	// A +300% bump is denied by max-step: failure naming the policy and a claim.
	denied := commit("8Gi")
	replace(t, cl.admin, sts, "8Gi", denied)
	desc := waitStatus(t, g, "shop", denied, statusCtx, "failure", "max-step", ctl)
	if !strings.Contains(desc, "data-web-") || len([]rune(desc)) > 140 {
		t.Errorf("failure description %q: want the claim named, at most 140 characters", desc)
	}
	for _, name := range claimNames("web", 2) {
		if got := request(claim(t, cl.admin, ns, name)); got != "2Gi" {
			t.Errorf("%s: request %s after a denied bump, want 2Gi", name, got)
		}
	}
	// The reporter records the post in the VolumeClaimRollout right after it.
	vcr := &v1alpha1.VolumeClaimRollout{}
	waitFor(t, "lastCommitStatus failure on "+denied[:8], []*controller{ctl}, func(ctx context.Context) (bool, error) {
		if err := cl.admin.Get(ctx, client.ObjectKeyFromObject(sts), vcr); err != nil {
			return false, err
		}
		last := vcr.Status.LastCommitStatus
		return last != nil && last.State == "failure" && last.Revision == denied && last.Context == statusCtx, nil
	})
}

// giteaConfig stores token in a Secret of the controller's namespace and
// writes a configuration file naming the Gitea at url with that Secret. The
// tests' StatefulSets name their commits in annotations: those naming url
// (or repositoryPrefixes) are allowed in every namespace.
func giteaConfig(t *testing.T, cl *cluster, url, token, secretName string, repositoryPrefixes ...string) string {
	t.Helper()
	return writeGiteaConfig(t, url, giteaSecret(t, cl, token, secretName), append([]string{url}, repositoryPrefixes...))
}

// giteaSecret stores token in a Secret of the controller's namespace and
// returns its name.
func giteaSecret(t *testing.T, cl *cluster, token, secretName string) string {
	t.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: controllerNamespace, Name: secretName + "-" + strings.ToLower(t.Name())},
		StringData: map[string]string{"token": token},
	}
	if err := cl.admin.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	return secret.Name
}

// writeGiteaConfig writes a configuration file naming the Gitea at url with
// the token in secret, allowing StatefulSets' repository annotations under
// prefixes in every namespace; none, for a release that predates
// gitStatus.workloadAnnotations (it refuses unknown keys) or for sources
// that name their own commits.
func writeGiteaConfig(t *testing.T, url, secret string, prefixes []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	body := fmt.Sprintf("gitStatus:\n  hosts:\n  - url: %s\n    type: gitea\n    tokenSecretRef:\n      name: %s\n", url, secret)
	if len(prefixes) > 0 {
		body += "  workloadAnnotations:\n  - namespace: \"*\"\n    repositoryPrefixes:\n"
		for _, prefix := range prefixes {
			body += "    - " + prefix + "\n"
		}
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// replace re-creates the StatefulSet with size and the commit that proposed it.
func replace(t *testing.T, c client.Client, sts *appsv1.StatefulSet, size, sha string) {
	t.Helper()
	err := fixtures.ReplaceTemplates(context.Background(), c, client.ObjectKeyFromObject(sts), func(s *appsv1.StatefulSet) {
		fixtures.SetTemplateSize(size)(s)
		s.Annotations[v1alpha1.RevisionAnnotation] = "main@sha1:" + sha
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitStatus polls Gitea until the commit's status for statusContext is state
// with a description containing want, and returns the description.
func waitStatus(t *testing.T, g *gitea.Server, repo, sha, statusContext, state, want string, procs ...*controller) string {
	t.Helper()
	var last string
	waitFor(t, fmt.Sprintf("commit %s: status %s %q", sha[:8], state, want), procs, func(ctx context.Context) (bool, error) {
		_, statuses, err := g.CombinedStatus(ctx, repo, sha)
		if err != nil {
			return false, nil
		}
		for _, s := range statuses {
			if s.Context == statusContext {
				last = s.State + " " + s.Description
				if s.State == state && strings.Contains(s.Description, want) {
					return true, nil
				}
			}
		}
		return false, nil
	})
	return strings.TrimPrefix(last, state+" ")
}

// A Git host answering 500 for a while, then recovering, ends with the right
// final status and no duplicate post: the reporter retries off the reconcile
// path with back-off, and only the newest status is posted.
func TestCommitStatusSurvivesAnOutage(t *testing.T) {
	cl := started(t)
	ctx := context.Background()
	g := startGitea(t)
	repoURL, err := g.CreateRepo(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	sha, err := g.PushCommit(ctx, "shop", map[string]string{"web.yaml": "storage: 1Gi\n"}, "storage 1Gi")
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(g.URL)
	if err != nil {
		t.Fatal(err)
	}
	host := newFlakyHost(httputil.NewSingleHostReverseProxy(target), 15*time.Second, sha)
	t.Cleanup(host.Close)

	ns := namespace(t, cl.admin)
	ctl := startController(t, cl, "controller", "--config", giteaConfig(t, cl, host.URL, g.Token, "flaky-token", g.URL))

	sts := fixtures.StatefulSet(ns, "web", 2, class, "1Gi")
	sts.Annotations = map[string]string{v1alpha1.RepositoryAnnotation: repoURL, v1alpha1.RevisionAnnotation: sha}
	createReady(t, cl.admin, sts)
	waitStatus(t, g, "shop", sha, "claimwarden/"+ns+"/web", "success", "2/2 claims compatible", ctl)

	refused, posted := host.counts()
	if refused == 0 {
		t.Fatal("no post was attempted during the outage; the test proves nothing")
	}
	seen := map[string]int{}
	for _, p := range posted {
		seen[p]++
		if seen[p] > 1 {
			t.Errorf("posted twice after the outage: %s", p)
		}
	}
	if len(posted) == 0 || !strings.HasPrefix(posted[len(posted)-1], "success ") {
		t.Errorf("posts after the outage %q: want the last to be success", posted)
	}
	t.Logf("outage: %d posts refused with 500; after it: %q", refused, posted)
}

// flakyHost answers 500 to every status post for one commit until the outage
// ends, then forwards to the real Git host and records what it forwarded.
type flakyHost struct {
	*httptest.Server
	until time.Time

	mu      sync.Mutex
	refused int
	posted  []string // "state description" of forwarded status posts
}

// Only the posts for commit sha are refused and recorded: the controller
// watches every namespace, and other tests' rollouts whose repositories are
// on 127.0.0.1 reach this host too (configured hosts also match by name).
func newFlakyHost(next http.Handler, outage time.Duration, sha string) *flakyHost {
	f := &flakyHost{until: time.Now().Add(outage)}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		isStatus := r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/statuses/"+sha)
		if isStatus && time.Now().Before(f.until) {
			f.mu.Lock()
			f.refused++
			f.mu.Unlock()
			http.Error(w, "simulated outage", http.StatusInternalServerError)
			return
		}
		if isStatus {
			var s struct{ State, Description string }
			b, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(b, &s)
			r.Body = io.NopCloser(bytes.NewReader(b))
			f.mu.Lock()
			f.posted = append(f.posted, s.State+" "+s.Description)
			f.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	}))
	return f
}

func (f *flakyHost) counts() (int, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused, append([]string(nil), f.posted...)
}
