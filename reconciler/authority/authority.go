// Package authority decides whether a proposal's writes are ones its
// proposer may make. claimwarden holds cluster-wide rights to orphan-delete
// and create StatefulSets and to patch claims; a GitOps tool that applies as
// a service account of its own (Flux's serviceAccountName or lockdown
// default, Argo CD's sync impersonation) must not reach through claimwarden
// what that account could not write itself.
//
// The check is a SubjectAccessReview for every write of a step, asked
// before the first of them, rather than impersonating the proposer for the
// writes themselves:
//   - the orphan delete is irreversible: with impersonation a create refused
//     after it would leave the StatefulSet deleted, and the crash journal
//     must always be able to finish a re-create it started;
//   - impersonation needs the `impersonate` verb on service accounts (and
//     their groups) cluster-wide, a right wider than any claimwarden holds
//     today; a review needs only `create subjectaccessreviews`;
//   - the writes stay the controller's own: its field manager, finalizer
//     and sealed journal record.
//
// The price is a window between the review and the write (a role revoked
// meanwhile); it is bounded by the review cache's lifetime and one step.
package authority

import (
	"context"
	"fmt"
	"strings"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// ServiceAccount is the identity the API server gives service account name
// of namespace.
func ServiceAccount(namespace, name string) *v1alpha1.Identity {
	return &v1alpha1.Identity{
		User:   "system:serviceaccount:" + namespace + ":" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
}

// Write is one request the controller would make for a proposal.
type Write struct {
	Verb, Group, Resource, Subresource, Namespace, Name string
}

func (w Write) String() string {
	res := w.Resource
	if w.Group != "" {
		res += "." + w.Group
	}
	if w.Subresource != "" {
		res += "/" + w.Subresource
	}
	obj := w.Namespace + "/" + w.Name
	if w.Name == "" {
		obj = "in namespace " + w.Namespace
	}
	return strings.TrimSpace(w.Verb + " " + res + " " + obj)
}

// DeleteStatefulSet is the orphan delete of a convergence.
func DeleteStatefulSet(namespace, name string) Write {
	return Write{Verb: "delete", Group: "apps", Resource: "statefulsets", Namespace: namespace, Name: name}
}

// CreateStatefulSet is the re-create of an orphan-deleted StatefulSet.
func CreateStatefulSet(namespace, name string) Write {
	return Write{Verb: "create", Group: "apps", Resource: "statefulsets", Namespace: namespace, Name: name}
}

// PatchClaim is a claim's patch (server-side apply is a PATCH).
func PatchClaim(namespace, name string) Write {
	return Write{Verb: "patch", Resource: "persistentvolumeclaims", Namespace: namespace, Name: name}
}

// EvictPod is the eviction that restarts a Pod for an offline expansion.
func EvictPod(namespace, name string) Write {
	return Write{Verb: "create", Resource: "pods", Subresource: "eviction", Namespace: namespace, Name: name}
}

// Refusal says that an identity may not make a write; nothing was written.
type Refusal struct {
	Identity v1alpha1.Identity
	Write    Write
	// Reason is the authorizer's, when it gave one.
	Reason string
}

func (r *Refusal) Error() string {
	msg := fmt.Sprintf("%s may not %s: nothing was written", r.Identity.User, r.Write)
	if r.Reason != "" {
		msg += " (" + r.Reason + ")"
	}
	return msg
}

// Checker answers whether id may make every one of writes: nil when it
// may, a *Refusal naming the first it may not, or another error when the
// question could not be asked (then nothing may be written either).
type Checker interface {
	Check(ctx context.Context, id v1alpha1.Identity, writes []Write) error
}

// ServiceAccountOr is the identity of service account name of namespace,
// or of fallback there when name is empty (a tool's lockdown default, as
// Flux's --default-service-account); nil when both are empty: the tool
// applies as itself.
func ServiceAccountOr(namespace, name, fallback string) *v1alpha1.Identity {
	if name == "" {
		name = fallback
	}
	if name == "" {
		return nil
	}
	return ServiceAccount(namespace, name)
}
