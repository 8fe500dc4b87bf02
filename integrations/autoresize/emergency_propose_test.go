package autoresize

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
	"github.com/claimwarden/claimwarden/reconciler/authority"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/reconciler/source"
	giteasrv "github.com/claimwarden/claimwarden/test/gitea"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// counted is a real Git host whose proposals are counted: each one is a
// push and an edit of the pull request, a notification to its reviewers.
type counted struct {
	pullrequest.Proposer
	proposals int
}

func (c *counted) Propose(ctx context.Context, ch pullrequest.Change) (pullrequest.PullRequest, error) {
	c.proposals++
	return c.Proposer.Propose(ctx, ch)
}

// An emergency growth that is refused (the tool's identity may not patch
// the claim) or fails (the patch is invalid) leaves the open pull request
// that proposes the change alone at the next checks: the error says why,
// the growth is tried again, the pull request is not pushed nor edited.
// On a real API server and a real Gitea.
func TestARefusedGrowthNowLeavesThePullRequest(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{CRDDirs: []string{filepath.Join("..", "..", "config", "crd", "bases")}})
	kube := testenv.Client(t, env.Config, v1alpha1.AddToScheme)
	srv := giteasrv.StartT(t)
	ctx := context.Background()
	if _, err := srv.CreateRepo(ctx, "shop"); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.PushCommit(ctx, "shop", map[string]string{"apps/web.yaml": webManifest}, "web at 10Gi"); err != nil {
		t.Fatal(err)
	}
	base, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	// The rollout whose status remembers the commit claimwarden made.
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}},
	} {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: appsv1.StatefulSetSpec{VolumeClaimTemplates: []corev1.PersistentVolumeClaim{template("data", "10Gi")}}}
	claim := template("data-web-0", "10Gi")
	claim.Namespace = "shop"
	growths := []Growth{{Template: "data", From: resource.MustParse("10Gi"), To: resource.MustParse("13Gi"),
		Claims: []ClaimGrowth{{Name: "data-web-0", ToBytes: 13 * gi, Now: true}}}}

	for name, c := range map[string]struct {
		tool *v1alpha1.Identity
		why  string
	}{
		"refused": {authority.ServiceAccount("shop", "nobody"), "system:serviceaccount:shop:nobody may not patch persistentvolumeclaims shop/data-web-0"},
		// data-web-0 does not exist: growing it fails, as the rollout's
		// writer creates no claim.
		"failed": {nil, "growing PVC shop/data-web-0 to 13Gi now"},
	} {
		t.Run(name, func(t *testing.T) {
			host := &counted{Proposer: &pullrequest.Gitea{Base: base, Token: srv.Token, HTTP: &http.Client{Transport: &http.Transport{Proxy: nil}}}}
			events := events.NewFakeRecorder(100)
			ctl := &Controller{Client: kube, Writer: rollout.NewWriter(kube, kube), Authority: authority.NewReviews(kube, 0), Recorder: outcome.Recorder{EventRecorder: events}, Log: logr.Discard()}
			j := &job{c: ctl, sts: sts, claims: []corev1.PersistentVolumeClaim{claim},
				src: origin{Applier: source.Applier{Source: v1alpha1.Source{Kind: "Kustomization", Namespace: "flux-system", Name: "shop"}, Authority: c.tool}}}
			g := &gitSide{where: Where{Branch: "main", Dir: "apps"}, repo: githost.Repository{Owner: srv.User, Name: "shop"},
				host: host, key: KeyPrefix + "shop/web-" + name}

			for i := range 3 {
				// As a check does: the status shows the last pull request,
				// and is recorded after.
				st := &v1alpha1.AutoresizeStatus{LastChecked: metaTime(time.Now())}
				if g.last != nil {
					st.PullRequest, st.State = g.last.URL, string(g.last.State)
				}
				err := j.propose(ctx, st, g, Request{StatefulSet: keyOf(sts), Growths: growths})
				if err == nil || !strings.Contains(err.Error(), c.why) {
					t.Fatalf("check %d: error %v, want one saying %s", i, err, c.why)
				}
				ctl.record(ctx, sts, *st)
				if host.proposals != 1 {
					t.Fatalf("check %d: %d proposals, want 1: the open pull request was pushed and edited again", i, host.proposals)
				}
				if g.last, err = host.Last(ctx, srv.User, "shop", g.key); err != nil || g.last == nil || g.last.State != pullrequest.Open {
					t.Fatalf("check %d: last pull request %+v, %v; want the open one", i, g.last, err)
				}
			}
		})
	}
}
