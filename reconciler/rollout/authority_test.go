package rollout_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/authority"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// TestProposalWritesNothingItsAuthorityMayNot: a proposal whose tool applies
// as a service account without rights on the StatefulSet's namespace is
// refused before anything is written, saying who may not do what, and asked
// about again (AuthorityRecheck: a role granted makes no event); once
// the account may delete and create the StatefulSet but not patch its
// claims, still nothing is written (the re-create cannot be undone); with
// every right the proposal converges.
func TestProposalWritesNothingItsAuthorityMayNot(t *testing.T) {
	c := started(t)
	ctx := context.Background()
	ns := namespace(t, c)
	live, key := createLive(t, c, fixtures.StatefulSet(ns, "db", 2, classExpandable, "1Gi"))

	var reapplied atomic.Int32
	p, _ := gitProposal(live, "1536Mi", &reapplied)
	p.Authority = authority.ServiceAccount(ns, "deployer")
	proposals.Set(ctx, p)

	refusedOn := func(what string) {
		t.Helper()
		vcr := waitRollout(t, c, key, "refused: "+what, func(v *v1alpha1.VolumeClaimRollout) bool {
			return stalled(v) && strings.Contains(condition(v, "Stalled"), v1alpha1.ReasonNotAuthorized) &&
				strings.Contains(condition(v, "Stalled"), what)
		})
		if !strings.Contains(condition(vcr, "Stalled"), "system:serviceaccount:"+ns+":deployer may not") {
			t.Errorf("Stalled: %s, want the identity named", condition(vcr, "Stalled"))
		}
		var now appsv1.StatefulSet
		if err := c.Get(ctx, key, &now); err != nil {
			t.Fatal(err)
		}
		if now.UID != live.UID {
			t.Fatalf("the StatefulSet was re-created although %s was refused", what)
		}
		for _, name := range []string{"data-db-0", "data-db-1"} {
			if got := request(claim(t, c, ns, name)); got.String() != "1Gi" {
				t.Errorf("claim %s requests %s although %s was refused", name, got.String(), what)
			}
		}
	}
	refusedOn("delete statefulsets.apps " + ns + "/db")
	if e := waitEvents(t, c, ns, v1alpha1.ReasonNotAuthorized, 1); !strings.Contains(e[0].Note, "deployer may not delete") {
		t.Errorf("event %q, want the refusal", e[0].Note)
	}

	grant(t, c, ns, "deployer", rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"delete", "create"}})
	refusedOn("patch persistentvolumeclaims")

	grant(t, c, ns, "deployer", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"patch"}})
	waitRollout(t, c, key, "Ready at 1536Mi", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Compatible == 2 && v.Status.Claims[0].To == "1536Mi"
	})
	if v := waitRollout(t, c, key, "recorded", func(*v1alpha1.VolumeClaimRollout) bool { return true }); v.Status.Proposal == nil ||
		v.Status.Proposal.Authority == nil || v.Status.Proposal.Authority.User != p.Authority.User {
		t.Errorf("recorded proposal %+v, want its authority kept", v.Status.Proposal)
	}
}

// grant adds rule to service account sa of ns, in a Role of its own.
func grant(t *testing.T, c client.Client, ns, sa string, rule rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	name := sa + "-" + strings.Join(rule.Resources, "-")
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: []rbacv1.PolicyRule{rule}}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	// The API server's authorizer learns of the binding through a watch:
	// the test goes on once it answers with it.
	id := authority.ServiceAccount(ns, sa)
	err := wait.PollUntilContextTimeout(ctx, fixtures.Poll, timeout, true, func(ctx context.Context) (bool, error) {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: id.User, Groups: id.Groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: rule.Verbs[0], Group: rule.APIGroups[0], Resource: rule.Resources[0], Namespace: ns}}}
		if err := c.Create(ctx, review); err != nil {
			return false, err
		}
		return review.Status.Allowed, nil
	})
	if err != nil {
		t.Fatalf("%s was never authorised to %s %s: %v", id.User, rule.Verbs[0], rule.Resources[0], err)
	}
}
