package autoresize

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
	"github.com/claimwarden/claimwarden/integrations/usage"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/assess"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// fixedTool locates every object of kind Fixed in one repository's main
// branch; nothing else of a tool is asked by a check.
type fixedTool struct{ source.Tool }

func (fixedTool) Kind() string             { return "Fixed" }
func (fixedTool) NewObject() client.Object { return &corev1.ConfigMap{} }
func (fixedTool) Locate(context.Context, client.Object, source.Parents) (source.Where, error) {
	return source.Where{Repository: "https://github.example/octo/shop.git", Branch: "main", Dir: "apps"}, nil
}

// assessedIn is a rollout that assesses with cluster.
type assessedIn assess.Cluster

func (a assessedIn) Ahead(context.Context, *appsv1.StatefulSet, policies.Source, []corev1.PersistentVolumeClaim) (assess.Settings, assess.Cluster) {
	return assess.Settings{}, assess.Cluster(a)
}

// hostController is a Controller that checks s's StatefulSets, whose
// Fixed tool object Git holds in one repository, asking proposers; and the
// scheme of its clients (the test sets Client).
func hostController(t *testing.T, s State, proposers Proposers) (*Controller, *runtime.Scheme) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var tools source.Registry
	tools.Know(fixedTool{})
	return &Controller{
		Policies: shipped(t), Rollout: assessedIn(s.Cluster), Tools: &tools, Recorder: outcome.Recorder{EventRecorder: events.NewFakeRecorder(100)},
		Metrics: NewMetrics(""), Log: logr.Discard(), Proposers: proposers,
	}, scheme
}

// A StatefulSet at rest costs its Git host nothing: the host is asked only
// when the policies would grow a claim (asked as if no pull request had
// closed), or a pull request claimwarden opened is open (its merge or
// close must be seen). Once asked, a pull request closed within the
// cooldown is known, and nothing is proposed. GitHub's protocol on
// httptest, every request recorded.
func TestAtRestTheGitHostIsNotAsked(t *testing.T) {
	var mu sync.Mutex
	var requests []string
	closedAt := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.Method+" "+r.URL.Path+"?state="+r.URL.Query().Get("state"))
		mu.Unlock()
		switch {
		case r.URL.Path == "/api/v3/user":
			_, _ = w.Write([]byte(`{"login":"claimwarden","id":7}`))
		case r.URL.Path == "/api/v3/repos/octo/shop/pulls" && r.URL.Query().Get("state") == "open":
			_, _ = w.Write([]byte(`[]`))
		case r.URL.Path == "/api/v3/repos/octo/shop/pulls":
			_, _ = w.Write([]byte(`[{"number":4,"state":"closed","merged_at":"` + closedAt + `","closed_at":"` + closedAt +
				`","html_url":"https://github.example/octo/shop/pull/4","user":{"login":"claimwarden","id":7},` +
				`"head":{"ref":"claimwarden/autoresize/shop/web","sha":"c0ffee","repo":{"id":9}},"base":{"ref":"main","repo":{"id":9}}}]`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	asked := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := requests
		requests = nil
		return out
	}

	s := shop("100Gi")
	host := strings.TrimPrefix(srv.URL, "http://")
	ctl, scheme := hostController(t, s, func(repo githost.Repository) (pullrequest.Proposer, error) {
		// The repository's URL names github.example; the API is the test's.
		return pullrequest.New(githost.Host{URL: "http://" + host, Type: githost.GitHub, Token: "t0ken"}, githost.Clients{}, nil)
	})
	rule := &Rule{Namespace: "shop", RepositoryPrefixes: []string{"https://github.example/octo"}}
	src := origin{Applier: source.Applier{Source: v1alpha1.Source{Kind: "Fixed", Namespace: "flux-system", Name: "shop"}, Object: &corev1.ConfigMap{}}}
	calm := map[string]usage.Usage{
		"data-web-0": {CapacityBytes: 10 * gi, UsedBytes: 2 * gi},
		"data-web-1": {CapacityBytes: 10 * gi, UsedBytes: 2 * gi},
	}
	for _, tc := range []struct {
		name  string
		prior *v1alpha1.AutoresizeStatus
		used  map[string]usage.Usage
		want  []string // the requests made, sorted
		msg   string   // the start of the status message
	}{
		{name: "at rest", used: calm, msg: "no claim needs to grow"},
		{name: "at rest after a merged pull request", used: calm, msg: "no claim needs to grow",
			prior: &v1alpha1.AutoresizeStatus{PullRequest: "https://github.example/octo/shop/pull/4", State: "merged"}},
		// The repository's open ones listed, without it: then its own.
		{name: "a pull request open", used: calm, msg: "no claim needs to grow (the last pull request was merged",
			prior: &v1alpha1.AutoresizeStatus{PullRequest: "https://github.example/octo/shop/pull/4", State: "open"},
			want:  []string{"GET /api/v3/repos/octo/shop/pulls?state=all", "GET /api/v3/repos/octo/shop/pulls?state=open", "GET /api/v3/user?state="}},
		{name: "filling, within the cooldown", used: s.Usage, msg: "no claim needs to grow (the last pull request was merged",
			want: []string{"GET /api/v3/repos/octo/shop/pulls?state=all", "GET /api/v3/user?state="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vcr := &v1alpha1.VolumeClaimRollout{}
			vcr.Namespace, vcr.Name = "shop", "web"
			vcr.Status.Autoresize = tc.prior
			ctl.Client = fake.NewClientBuilder().WithScheme(scheme).WithObjects(vcr).WithStatusSubresource(vcr).Build()
			st := v1alpha1.AutoresizeStatus{}
			j := &job{c: ctl, rule: rule, sts: s.Live, src: src, claims: s.Claims, used: tc.used, now: time.Now(), tools: newToolMemo(ctl.Client), repos: newRepoMemo()}
			j.run(context.Background(), &st)
			got := asked()
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("requests %q, want %q", got, tc.want)
			}
			if !strings.HasPrefix(st.Message, tc.msg) || j.err != nil {
				t.Errorf("status %+v (error %v), want a message starting %q", st, j.err, tc.msg)
			}
			if tc.prior != nil && (st.PullRequest != tc.prior.PullRequest || tc.want == nil && st.State != tc.prior.State) {
				t.Errorf("status %+v: the recorded pull request %s (%s) is not kept", st, tc.prior.PullRequest, tc.prior.State)
			}
		})
	}
}
