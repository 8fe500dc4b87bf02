package plan

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// The controller reads these from the live StatefulSet, and `claimwarden
// check` from the current one (base or cluster), through the same code: a
// proposal that sets them takes effect only once applied, so it cannot
// switch off the check of its own change.

// SkipReason says why claimwarden does not manage sts, or "".
func SkipReason(sts *appsv1.StatefulSet) string {
	if sts.Annotations[v1alpha1.IgnoreAnnotation] == "true" {
		return fmt.Sprintf("annotation %s is \"true\"", v1alpha1.IgnoreAnnotation)
	}
	if owner := metav1.GetControllerOf(sts); owner != nil {
		return fmt.Sprintf("controlled by %s %s, which owns its claims", owner.Kind, owner.Name)
	}
	return ""
}

// StrategyOf reads the update-strategy annotation of sts, falling back to
// the configured default.
func StrategyOf(sts *appsv1.StatefulSet, fallback v1alpha1.UpdateStrategy) (v1alpha1.UpdateStrategy, error) {
	v, ok := sts.Annotations[v1alpha1.UpdateStrategyAnnotation]
	if !ok {
		return fallback, nil
	}
	switch s := v1alpha1.UpdateStrategy(v); s {
	case v1alpha1.InPlace, v1alpha1.OnClaimDelete:
		return s, nil
	}
	return "", fmt.Errorf("StatefulSet %s/%s: annotation %s: %q is not one of %s, %s",
		sts.Namespace, sts.Name, v1alpha1.UpdateStrategyAnnotation, v, v1alpha1.InPlace, v1alpha1.OnClaimDelete)
}

// RestartForExpansionOf reads the restart-for-expansion annotation of sts
// ("true" or "false"), falling back to the configured default: whether the
// controller may evict the StatefulSet's Pods whose claims wait for a
// file system resize on remount.
func RestartForExpansionOf(sts *appsv1.StatefulSet, fallback bool) (bool, error) {
	v, ok := sts.Annotations[v1alpha1.RestartForExpansionAnnotation]
	if !ok {
		return fallback, nil
	}
	switch v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("StatefulSet %s/%s: annotation %s: %q is not \"true\" or \"false\"",
		sts.Namespace, sts.Name, v1alpha1.RestartForExpansionAnnotation, v)
}
