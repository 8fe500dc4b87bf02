package app

import (
	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
)

// workloadAnnotations is the rollout's allow-list of StatefulSets'
// repository annotations, from gitStatus.workloadAnnotations.
func workloadAnnotations(rules []config.WorkloadAnnotationRule) *rollout.WorkloadAnnotations {
	out := make([]rollout.AnnotationRule, len(rules))
	for i, r := range rules {
		out[i] = rollout.AnnotationRule{Namespace: r.Namespace, RepositoryPrefixes: r.RepositoryPrefixes}
	}
	return rollout.NewWorkloadAnnotations(out)
}
