package autoresize

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
	"github.com/claimwarden/claimwarden/integrations/usage"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// fakeGitHubPulls is GitHub's pull request listing of one repository,
// octo/shop, on httptest, answering ETags as GitHub does (a 304 to a
// request whose If-None-Match is the listing's ETag); every request is
// recorded, a conditional one marked "(if-none-match)".
type fakeGitHubPulls struct {
	mu       sync.Mutex
	open     []string // the StatefulSets whose pull request is open
	merged   string   // one whose pull request was merged
	requests []string
}

func (f *fakeGitHubPulls) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	req := r.Method + " " + r.URL.Path + "?state=" + r.URL.Query().Get("state")
	if r.Header.Get("If-None-Match") != "" {
		req += " (if-none-match)"
	}
	f.requests = append(f.requests, req)
	pull := func(name, state string) string {
		closed := ""
		if state == "closed" {
			closed = `,"merged_at":"2026-12-01T00:00:00Z","closed_at":"2026-12-01T00:00:00Z"`
		}
		return fmt.Sprintf(`{"number":%d,"state":%q%s,"html_url":"https://github.example/octo/shop/pull/%s","user":{"login":"claimwarden","id":7},`+
			`"head":{"ref":"claimwarden/autoresize/shop/%s","sha":"c0ffee","repo":{"id":9}},"base":{"ref":"main","repo":{"id":9}}}`,
			len(name), state, closed, name, name)
	}
	var body string
	switch {
	case r.URL.Path == "/api/v3/user":
		body = `{"login":"claimwarden","id":7}`
	case r.URL.Path == "/api/v3/repos/octo/shop/pulls" && r.URL.Query().Get("state") == "open":
		var pulls []string
		for _, name := range f.open {
			pulls = append(pulls, pull(name, "open"))
		}
		body = "[" + strings.Join(pulls, ",") + "]"
	case r.URL.Path == "/api/v3/repos/octo/shop/pulls" && r.URL.Query().Get("head") == "octo:claimwarden/autoresize/shop/"+f.merged:
		body = "[" + pull(f.merged, "closed") + "]"
	default:
		w.WriteHeader(http.StatusNotFound)
		return
	}
	sum := sha256.Sum256([]byte(body))
	etag := `W/"` + hex.EncodeToString(sum[:8]) + `"`
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write([]byte(body))
}

func (f *fakeGitHubPulls) asked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.requests
	f.requests = nil
	slices.Sort(out)
	return out
}

// Every StatefulSet whose pull request is open is asked after at every
// check, and a repository's open pull requests are listed once per round
// for all of them, conditionally: unchanged, the host answers 304, which
// GitHub does not count against the rate limit. A pull request the
// listing no longer holds is asked after on its own (merged, and when).
func TestOpenPullRequestsAreListedOncePerRepository(t *testing.T) {
	gh := &fakeGitHubPulls{open: []string{"api", "db", "web"}}
	srv := httptest.NewServer(gh)
	defer srv.Close()

	s := shop("100Gi")
	var objs []client.Object
	for _, name := range gh.open {
		vcr := &v1alpha1.VolumeClaimRollout{}
		vcr.Namespace, vcr.Name = "shop", name
		vcr.Status.Autoresize = &v1alpha1.AutoresizeStatus{PullRequest: "https://github.example/octo/shop/pull/" + name, State: "open"}
		objs = append(objs, vcr)
	}
	clients := githost.Clients{Conditional: githost.NewConditional()}
	ids := &pullrequest.Identities{}
	ctl, scheme := hostController(t, s, BackOffHosts(func(githost.Repository) (pullrequest.Proposer, error) {
		return pullrequest.New(githost.Host{URL: srv.URL, Type: githost.GitHub, Token: "t0ken"}, clients, ids)
	}))
	ctl.Client = fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	rule := &Rule{Namespace: "shop", RepositoryPrefixes: []string{"https://github.example/octo"}}
	src := origin{Applier: source.Applier{Source: v1alpha1.Source{Kind: "Fixed", Namespace: "flux-system", Name: "shop"}, Object: &corev1.ConfigMap{}}}
	calm := map[string]usage.Usage{"data-web-0": {CapacityBytes: 10 * gi, UsedBytes: 2 * gi}}
	round := func() map[string]v1alpha1.AutoresizeStatus {
		repos, out := newRepoMemo(), map[string]v1alpha1.AutoresizeStatus{}
		for _, name := range []string{"api", "db", "web"} {
			sts := s.Live.DeepCopy()
			sts.Name = name
			j := &job{c: ctl, rule: rule, sts: sts, src: src, claims: s.Claims, used: calm, now: time.Now(), tools: newToolMemo(ctl.Client), repos: repos}
			var st v1alpha1.AutoresizeStatus
			j.run(context.Background(), &st)
			if j.err != nil {
				t.Fatalf("%s: %v", name, j.err)
			}
			out[name] = st
		}
		return out
	}
	for i, want := range [][]string{
		{"GET /api/v3/repos/octo/shop/pulls?state=open", "GET /api/v3/user?state="},
		// Unchanged: conditional, answered 304.
		{"GET /api/v3/repos/octo/shop/pulls?state=open (if-none-match)"},
	} {
		got := round()
		if asked := gh.asked(); !slices.Equal(asked, want) {
			t.Errorf("round %d: requests %q, want %q", i+1, asked, want)
		}
		for name, st := range got {
			if st.State != "open" || st.PullRequest != "https://github.example/octo/shop/pull/"+name || !strings.HasSuffix(st.Message, "pull request "+st.PullRequest+" is open") {
				t.Errorf("round %d: %s's status %+v, want its pull request open", i+1, name, st)
			}
		}
	}

	gh.mu.Lock()
	gh.open, gh.merged = []string{"api", "web"}, "db"
	gh.mu.Unlock()
	got := round()
	want := []string{"GET /api/v3/repos/octo/shop/pulls?state=all", "GET /api/v3/repos/octo/shop/pulls?state=open (if-none-match)"}
	if asked := gh.asked(); !slices.Equal(asked, want) {
		t.Errorf("after a merge: requests %q, want %q", asked, want)
	}
	if st := got["db"]; st.State != "merged" {
		t.Errorf("db's status %+v, want its pull request merged", st)
	}
	if st := got["web"]; st.State != "open" {
		t.Errorf("web's status %+v, want its pull request open", st)
	}
}
