package e2e

import (
	"context"
	"fmt"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestControllerKubeconfigIsTheServiceAccount proves the premise of every
// other test: the kubeconfig handed to the binary really acts as the
// ServiceAccount. Were its token another identity's (the admin's), no
// missing permission could ever show.
func TestControllerKubeconfigIsTheServiceAccount(t *testing.T) {
	cl := started(t)
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", cl.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		t.Fatal(err)
	}
	if got := review.Status.UserInfo.Username; got != saUser {
		t.Errorf("the controller's kubeconfig authenticates as %q, want %q", got, saUser)
	}
	// Secrets outside the controller's namespace are what no rule grants; the
	// admin could read them.
	err = c.List(ctx, &corev1.SecretList{}, client.InNamespace("default"))
	if !apierrors.IsForbidden(err) {
		t.Errorf("listing secrets with the controller's kubeconfig: %v, want Forbidden", err)
	}
}

// TestServiceAccountPermissions asks the API server's authorizer, with
// SubjectAccessReviews, what config/rbac lets the ServiceAccount do. The
// rollouts below prove it has enough; this proves it has no more than the
// controller's promises (never delete a claim, never touch a Pod, no
// secrets, leader election only in its own namespace), and the permissions
// its StatefulSet re-creation needs.
func TestServiceAccountPermissions(t *testing.T) {
	cl := started(t)
	const ns = "any-namespace" // the ClusterRoleBinding applies in every namespace
	checkAccess(t, cl.admin, saUser, []access{
		// Needed.
		{"patch", "", "persistentvolumeclaims", "", ns, true},
		{"watch", "", "persistentvolumeclaims", "", "", true},
		{"get", "apps", "statefulsets", "", ns, true},
		{"create", "apps", "statefulsets", "", ns, true},
		{"delete", "apps", "statefulsets", "", ns, true},
		{"create", "claimwarden.dev", "volumeclaimrollouts", "", ns, true},
		{"patch", "claimwarden.dev", "volumeclaimrollouts", "status", ns, true},
		{"create", "events.k8s.io", "events", "", ns, true},
		{"patch", "events.k8s.io", "events", "", ns, true},
		{"update", "coordination.k8s.io", "leases", "", controllerNamespace, true},
		// Needed: policy input and policy ConfigMaps.
		{"watch", "storage.k8s.io", "storageclasses", "", "", true},
		{"get", "", "namespaces", "", "", true},
		{"watch", "", "resourcequotas", "", "", true},
		{"watch", "", "configmaps", "", controllerNamespace, true},
		// Needed: Pods watched (metadata) for updateStrategy OnDelete.
		{"watch", "", "pods", "", "", true},
		{"list", "", "pods", "", ns, true},
		// Needed by the Flux integration: Kustomizations watched and
		// patched (requestedAt), sources read, substituteFrom ConfigMaps read by name.
		{"watch", "kustomize.toolkit.fluxcd.io", "kustomizations", "", "", true},
		{"patch", "kustomize.toolkit.fluxcd.io", "kustomizations", "", ns, true},
		{"get", "source.toolkit.fluxcd.io", "gitrepositories", "", ns, true},
		{"get", "", "configmaps", "", ns, true},
		// Needed by the HelmRelease integration: HelmReleases watched and
		// patched (the request annotations), HelmCharts read; release
		// Secrets only where a RoleBinding says (none here: refused below).
		{"watch", "helm.toolkit.fluxcd.io", "helmreleases", "", "", true},
		{"patch", "helm.toolkit.fluxcd.io", "helmreleases", "", ns, true},
		{"update", "helm.toolkit.fluxcd.io", "helmreleases", "", ns, false},
		{"get", "source.toolkit.fluxcd.io", "helmcharts", "", ns, true},
		// Argo CD: Applications are watched, never written (syncs and
		// refreshes go through argocd-server's API with its own token).
		{"watch", "argoproj.io", "applications", "", "", true},
		{"get", "argoproj.io", "applications", "", ns, true},
		{"patch", "argoproj.io", "applications", "", ns, false},
		{"update", "argoproj.io", "applications", "", ns, false},
		{"delete", "argoproj.io", "applications", "", ns, false},
		// Refused: changing what Flux applies, listing ConfigMaps elsewhere, writing policy ConfigMaps.
		{"update", "kustomize.toolkit.fluxcd.io", "kustomizations", "", ns, false},
		{"update", "source.toolkit.fluxcd.io", "gitrepositories", "", ns, false},
		{"list", "", "configmaps", "", ns, false},
		{"update", "", "configmaps", "", controllerNamespace, false},
		// Refused: claimwarden never deletes a claim.
		{"delete", "", "persistentvolumeclaims", "", ns, false},
		{"deletecollection", "", "persistentvolumeclaims", "", ns, false},
		// Refused: it never writes a Pod (no restart, no eviction).
		{"create", "", "pods", "", ns, false},
		{"update", "", "pods", "", ns, false},
		{"patch", "", "pods", "", ns, false},
		{"delete", "", "pods", "", ns, false},
		{"deletecollection", "", "pods", "", ns, false},
		{"create", "", "pods", "eviction", ns, false},
		// Refused: Secrets outside the controller's namespace.
		{"get", "", "secrets", "", ns, false},
		{"list", "", "secrets", "", ns, false},
		{"watch", "", "secrets", "", "", false},
		{"get", "", "secrets", "", controllerNamespace, true},    // Git host and Argo CD tokens (their components)
		{"create", "", "secrets", "", controllerNamespace, true}, // the journal key, on the first re-create (convergence)
		{"create", "", "secrets", "", ns, false},
		// Refused: the volumes themselves belong to the storage.
		{"update", "", "persistentvolumes", "", "", false},
		{"delete", "", "persistentvolumes", "", "", false},
		// Refused: the Lease is the controller's own, in its own namespace.
		{"update", "coordination.k8s.io", "leases", "", ns, false},
		// Refused: no privilege escalation through RBAC.
		{"create", "rbac.authorization.k8s.io", "clusterrolebindings", "", "", false},
		{"bind", "rbac.authorization.k8s.io", "clusterroles", "", "", false},
		{"escalate", "rbac.authorization.k8s.io", "clusterroles", "", "", false},
		{"impersonate", "", "serviceaccounts", "", ns, false},
	})
}

// access is one question to the authorizer and the answer config/rbac must give.
type access struct {
	verb, group, resource, subresource, namespace string
	allowed                                       bool
}

// checkAccess asks a SubjectAccessReview per case for user (a ServiceAccount
// of controllerNamespace, with its groups). The RBAC authorizer reads
// bindings from an informer, so one created a moment ago may not apply yet:
// it first waits until every case that must be allowed is, then asserts
// every case once against the authorizer that has seen the bindings.
func checkAccess(t *testing.T, admin client.Client, user string, cases []access) {
	t.Helper()
	waitFor(t, "the authorizer to apply "+user+"'s bindings", nil, func(ctx context.Context) (bool, error) {
		for _, tc := range cases {
			if !tc.allowed {
				continue
			}
			if ok, reason, err := askAccess(ctx, admin, user, tc); err != nil || !ok {
				return false, fmt.Errorf("%s: allowed=%v (%s): %v", tc, ok, reason, err)
			}
		}
		return true, nil
	})
	for _, tc := range cases {
		ok, reason, err := askAccess(context.Background(), admin, user, tc)
		if err != nil {
			t.Fatal(err)
		}
		if ok != tc.allowed {
			t.Errorf("%s: allowed=%v (%s), want %v", tc, ok, reason, tc.allowed)
		}
	}
}

// askAccess asks the authorizer whether user may do tc.
func askAccess(ctx context.Context, admin client.Client, user string, tc access) (bool, string, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   user,
		Groups: saGroups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: tc.namespace, Verb: tc.verb, Group: tc.group,
			Resource: tc.resource, Subresource: tc.subresource,
		},
	}}
	if err := admin.Create(ctx, sar); err != nil {
		return false, "", err
	}
	return sar.Status.Allowed, sar.Status.Reason, nil
}

// String names the question as "verb resource/sub.group in namespace ns".
func (tc access) String() string {
	res := tc.resource
	if tc.subresource != "" {
		res += "/" + tc.subresource
	}
	if tc.group != "" {
		res += "." + tc.group
	}
	return fmt.Sprintf("%s %s in namespace %q", tc.verb, res, tc.namespace)
}
