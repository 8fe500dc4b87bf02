package autoresize

import (
	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// Rule lets autoresize propose for the StatefulSets of a namespace.
type Rule struct {
	// Namespace, or "*" for every namespace.
	Namespace string
	// RepositoryPrefixes are the repositories (or owners above them) its
	// pull requests may go to: the repository is the tenant's GitOps
	// object's, and the pull request is opened with the operator's write
	// credentials.
	RepositoryPrefixes []string
	// AllStatefulSets opts every StatefulSet of the namespace in (one
	// annotated "false" stays out); otherwise only those annotated "true".
	AllStatefulSets bool
}

// ruleFor is the first rule of namespace ns, nil when none.
func ruleFor(rules []Rule, ns string) *Rule {
	for i := range rules {
		if rules[i].Namespace == ns || rules[i].Namespace == "*" {
			return &rules[i]
		}
	}
	return nil
}

// optedIn reports whether rule lets autoresize propose for a StatefulSet
// with annotations.
func (r *Rule) optedIn(annotations map[string]string) bool {
	switch annotations[v1alpha1.AutoresizeAnnotation] {
	case "true":
		return true
	case "false":
		return false
	}
	return r.AllStatefulSets
}

// allows reports whether the rule lets pull requests go to repository.
func (r *Rule) allows(repository string) bool {
	repo, err := proposal.LocateRepository(repository)
	return err == nil && repo.UnderAny(r.RepositoryPrefixes)
}
