package rollout

import (
	"fmt"

	lru "github.com/hashicorp/golang-lru/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// ReasonAnnotationIgnored is the reason of the Warning event saying a
// StatefulSet's repository and revision annotations were ignored.
const ReasonAnnotationIgnored = "AnnotationIgnored"

// AnnotationRule allows the claimwarden.dev/repository and
// claimwarden.dev/revision annotations of the StatefulSets in Namespace ("*":
// every namespace) when the repository is under one of RepositoryPrefixes.
type AnnotationRule struct {
	Namespace          string
	RepositoryPrefixes []string
}

// WorkloadAnnotations is the operator's allow-list of repository and
// revision annotations on StatefulSets, with the memory of what was said
// about those it ignored. Whoever may edit a StatefulSet sets them, and
// commit statuses go out with the operator's credentials: outside the
// allow-list they would let a tenant post on any repository of a configured
// host. A nil *WorkloadAnnotations allows none and remembers nothing.
type WorkloadAnnotations struct {
	rules []AnnotationRule
	// told holds, per StatefulSet, the annotations last said to be
	// ignored, so each value is said once; bounded, the least recently
	// reconciled forgotten (which costs one repeated event).
	told *lru.Cache[types.NamespacedName, string]
}

// NewWorkloadAnnotations returns the allow-list of rules; none allows no
// annotation.
func NewWorkloadAnnotations(rules []AnnotationRule) *WorkloadAnnotations {
	told, err := lru.New[types.NamespacedName, string](outcome.DefaultEventMemory)
	if err != nil {
		panic(err) // only for a size < 1
	}
	return &WorkloadAnnotations{rules: rules, told: told}
}

// firstTold reports whether value was not the last thing said about key,
// and remembers it as said.
func (w *WorkloadAnnotations) firstTold(key types.NamespacedName, value string) bool {
	if w == nil {
		return true
	}
	if last, ok := w.told.Get(key); ok && last == value {
		return false
	}
	w.told.Add(key, value)
	return true
}

// allowed forgets what was said about key, so that an annotation ignored
// again later is said again.
func (w *WorkloadAnnotations) allowed(key types.NamespacedName) {
	if w != nil {
		w.told.Remove(key)
	}
}

func (w *WorkloadAnnotations) rulesOrNone() []AnnotationRule {
	if w == nil {
		return nil
	}
	return w.rules
}

// workloadAnnotations returns the repository and revision annotations of
// sts when the allow-list lets them be used; otherwise it returns ok false
// and records, once per StatefulSet and value, a Warning event saying why.
func (r *Reconciler) workloadAnnotations(sts *appsv1.StatefulSet) (repository, revision string, ok bool) {
	repository = sts.Annotations[v1alpha1.RepositoryAnnotation]
	revision = sts.Annotations[v1alpha1.RevisionAnnotation]
	if repository == "" && revision == "" {
		return "", "", false
	}
	key := types.NamespacedName{Namespace: sts.Namespace, Name: sts.Name}
	allow := r.opts.WorkloadAnnotations
	allowed, why := annotationsAllowed(allow.rulesOrNone(), sts.Namespace, repository)
	if allowed {
		allow.allowed(key)
		return repository, revision, true
	}
	if allow.firstTold(key, repository+"\x00"+revision) {
		r.events.Eventf(sts, nil, v1alpha1.Source{}, corev1.EventTypeWarning, ReasonAnnotationIgnored, "Report",
			"ignoring the annotations %s and %s: %s; no commit status is posted for this StatefulSet's own templates",
			v1alpha1.RepositoryAnnotation, v1alpha1.RevisionAnnotation, why)
	}
	return "", "", false
}

// annotationsAllowed decides whether a StatefulSet in namespace may name
// repository (its claimwarden.dev/repository annotation, as written) and a
// revision in it; why says, for people, why not. The repository must be
// under a prefix of a rule for namespace or "*": same host (and port),
// and the prefix's path a whole number of path elements of the
// repository's, both compared in the form commit statuses are posted to
// (proposal.LocateRepository: no user information, scheme, ".git" or
// default port).
func annotationsAllowed(rules []AnnotationRule, namespace, repository string) (ok bool, why string) {
	if repository == "" {
		return false, fmt.Sprintf("%s is set without %s", v1alpha1.RevisionAnnotation, v1alpha1.RepositoryAnnotation)
	}
	shown := proposal.RepositoryURL(repository)
	repo, err := proposal.LocateRepository(repository)
	if err != nil {
		return false, fmt.Sprintf("the repository %s of namespace %s is not a Git repository URL", shown, namespace)
	}
	for _, rule := range rules {
		if rule.Namespace != namespace && rule.Namespace != "*" {
			continue
		}
		if repo.UnderAny(rule.RepositoryPrefixes) {
			return true, ""
		}
	}
	return false, fmt.Sprintf("the operator's allow-list (gitStatus.workloadAnnotations) does not include the repository %s for namespace %s", shown, namespace)
}
