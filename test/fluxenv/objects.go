package fluxenv

import (
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

const (
	// Branch is the branch GitRepository follows: the default branch of the
	// repositories test/gitea creates.
	Branch = "main"
	// KustomizationInterval is the drift-detection interval Kustomization sets: short,
	// so a test that changes the cluster behind Flux's back sees Flux react soon.
	KustomizationInterval = 10 * time.Second
	// KustomizationRetryInterval is how soon a failed Kustomization is retried, so a
	// test that repairs the cause sees it recover within seconds.
	KustomizationRetryInterval = 2 * time.Second
	// kustomizationTimeout bounds one reconciliation (fetch, build, apply). It
	// defaults to the interval, too tight for a loaded two-core CI machine.
	kustomizationTimeout = time.Minute
)

// AddToScheme adds the GitRepository, Kustomization and HelmRelease API types
// (and the rest of their groups' types) to s.
func AddToScheme(s *runtime.Scheme) error {
	if err := sourcev1.AddToScheme(s); err != nil {
		return err
	}
	if err := helmv2.AddToScheme(s); err != nil {
		return err
	}
	return kustomizev1.AddToScheme(s)
}

// Scheme returns a scheme with the built-in Kubernetes types and the Flux source,
// kustomize and helm types, for a controller-runtime client.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	// Both only fail on conflicting registrations, which a fresh scheme cannot have.
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// GitRepository returns a GitRepository ns/name that follows Branch of url
// (anonymous clone: a public repository) and polls it every interval.
func GitRepository(ns, name, url string, interval time.Duration) *sourcev1.GitRepository {
	return &sourcev1.GitRepository{
		TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.GitRepositoryKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: sourcev1.GitRepositorySpec{
			URL:       url,
			Interval:  metav1.Duration{Duration: interval},
			Reference: &sourcev1.GitRepositoryRef{Branch: Branch},
		},
	}
}

// Kustomization returns a Kustomization ns/name that applies path of the
// GitRepository ns/source with pruning on, reconciled every KustomizationInterval
// and retried every KustomizationRetryInterval after a failure.
func Kustomization(ns, name, source, path string) *kustomizev1.Kustomization {
	return &kustomizev1.Kustomization{
		TypeMeta:   metav1.TypeMeta{APIVersion: kustomizev1.GroupVersion.String(), Kind: kustomizev1.KustomizationKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kustomizev1.KustomizationSpec{
			SourceRef: kustomizev1.CrossNamespaceSourceReference{
				Kind: sourcev1.GitRepositoryKind,
				Name: source,
			},
			Path:          path,
			Prune:         true,
			Interval:      metav1.Duration{Duration: KustomizationInterval},
			RetryInterval: &metav1.Duration{Duration: KustomizationRetryInterval},
			Timeout:       &metav1.Duration{Duration: kustomizationTimeout},
		},
	}
}

// HelmRelease returns a HelmRelease ns/name of the chart at path in the
// GitRepository ns/source, released as the chart's Git revision changes
// (reconcileStrategy Revision: the chart version gets +<commit> appended), with
// helm-controller's default remediation (none: a failed upgrade stays failed).
// It is reconciled every KustomizationInterval.
func HelmRelease(ns, name, source, path string) *helmv2.HelmRelease {
	return &helmv2.HelmRelease{
		TypeMeta:   metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: helmv2.HelmReleaseSpec{
			Chart: &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
				Chart:             path,
				SourceRef:         helmv2.CrossNamespaceObjectReference{Kind: sourcev1.GitRepositoryKind, Name: source},
				ReconcileStrategy: sourcev1.ReconcileStrategyRevision,
				Interval:          &metav1.Duration{Duration: KustomizationInterval},
			}},
			Interval: metav1.Duration{Duration: KustomizationInterval},
			Timeout:  &metav1.Duration{Duration: kustomizationTimeout},
		},
	}
}
