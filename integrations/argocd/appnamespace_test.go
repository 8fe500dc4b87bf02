package argocd

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/argoenv"
)

// teamNamespace is where TestClientAgainstArgoCD's Argo CD allows
// Applications besides its own namespace.
const teamNamespace = "apps-team"

// assertOtherNamespace creates a manual Application named name in
// teamNamespace, deploying the repository's web directory to team-shop, and
// checks each call for it against the real argocd-server: an Application of
// the same name in Argo CD's namespace (deploying to shop) is what answers
// if a call does not name the namespace. The sync, pinned to rev, leaves it
// Synced.
func assertOtherNamespace(t *testing.T, ctx context.Context, c client.Client, argo *argoenv.ArgoCD, api *Client, repoURL, name, rev string) {
	t.Helper()
	team := types.NamespacedName{Namespace: teamNamespace, Name: name}
	if err := c.Create(ctx, argo.Application(argoenv.AppSpec{Name: name, Namespace: teamNamespace, RepoURL: repoURL, Path: "web", DestNamespace: "team-shop"})); err != nil {
		t.Fatal(err)
	}
	wait := func(what string, cond func(argoenv.AppStatus) bool) *unstructured.Unstructured {
		t.Helper()
		u, err := argo.WaitApp(ctx, c, team.Namespace, team.Name, func(u *unstructured.Unstructured) bool {
			s := argoenv.Status(u)
			return s.Revision == rev && cond(s)
		})
		if err != nil {
			t.Fatalf("Application %s %s: %v", team, what, err)
		}
		return u
	}
	u := wait("compared", func(s argoenv.AppStatus) bool { return s.Sync == "OutOfSync" })
	assertManaged(t, ctx, api, team, "team-shop", "1Gi")

	// A refresh of the Application in the other namespace shows as a later
	// status.reconciledAt, which has whole seconds: waiting for the clock
	// (not for a process) to leave the first comparison's second keeps the
	// refresh out of it.
	compared := reconciledAt(t, team, u)
	time.Sleep(time.Until(compared.Add(time.Second)))
	if err := api.Refresh(ctx, team); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, team, u); err != nil {
		t.Fatal(err)
	}
	if at := reconciledAt(t, team, u); !at.After(compared) {
		t.Errorf("Application %s status.reconciledAt %s after Refresh, want later than %s", team, at.Format(time.RFC3339), compared.Format(time.RFC3339))
	}

	app, err := applicationOf(u)
	if err != nil {
		t.Fatal(err)
	}
	if err := api.Sync(ctx, team, syncRequestFor(app, app.revisions())); err != nil {
		t.Fatal(err)
	}
	wait("synced", func(s argoenv.AppStatus) bool { return s.Sync == "Synced" && s.OperationPhase == "Succeeded" })
}

// reconciledAt is status.reconciledAt: when Argo CD last compared u.
func reconciledAt(t *testing.T, key types.NamespacedName, u *unstructured.Unstructured) time.Time {
	t.Helper()
	s, _, _ := unstructured.NestedString(u.Object, "status", "reconciledAt")
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("Application %s status.reconciledAt %q: %v", key, s, err)
	}
	return at
}
