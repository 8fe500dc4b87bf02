package autoresize

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/argocd"
)

// Where is where a GitOps tool reads a StatefulSet from in Git: the pull
// request goes to that repository and branch, and edits a file there.
type Where struct {
	// Repository is the repository's URL, Branch the branch the tool
	// follows.
	Repository, Branch string
	// Dir is the directory the tool builds (a Kustomization's path), from
	// the repository's root; "" for the root.
	Dir string
	// Chart is the chart's directory for a release of a chart in Git, and
	// ValuesFiles the values files it is released with, in order (the
	// last one wins); Release its release name and namespace.
	Chart       string
	ValuesFiles []string
	Release     types.NamespacedName
	// DetectChart says the directory is a chart when it holds a
	// Chart.yaml (as Argo CD detects one), released with ValuesFiles
	// (relative to Dir then); InlineValues that the tool sets values of
	// its own, which no file edit changes.
	DetectChart, InlineValues bool
}

// DefaultBranch is Where.Branch for "the repository's default branch"
// (Argo CD's targetRevision HEAD): the host says which.
const DefaultBranch = ""

// ErrNoBranch says the tool follows no branch (a tag, a semver range, a
// commit): there is nowhere to propose a change to.
var ErrNoBranch = errors.New("follows no branch")

// fluxDefaultBranch is the branch a GitRepository without a ref follows
// (source-controller's default).
const fluxDefaultBranch = "master"

// Locate is where the tool object of src reads its StatefulSets from.
// noCrossNamespaceRefs mirrors the Flux controllers' flag: a source in
// another namespace than the tool object's is refused, as Flux refuses it.
func Locate(ctx context.Context, c client.Reader, src v1alpha1.Source, noCrossNamespaceRefs bool) (Where, error) {
	l := locator{c: c, noCrossNamespaceRefs: noCrossNamespaceRefs}
	switch src.Kind {
	case kustomizev1.KustomizationKind:
		return l.kustomization(ctx, types.NamespacedName{Namespace: src.Namespace, Name: src.Name})
	case helmv2.HelmReleaseKind:
		return l.helmRelease(ctx, types.NamespacedName{Namespace: src.Namespace, Name: src.Name})
	case argocd.ApplicationKind:
		return l.application(ctx, types.NamespacedName{Namespace: src.Namespace, Name: src.Name})
	}
	return Where{}, fmt.Errorf("proposed by a %s: autoresize proposes pull requests for Flux Kustomizations, HelmReleases of charts in Git and Argo CD Applications", src.Kind)
}

type locator struct {
	c                    client.Reader
	noCrossNamespaceRefs bool
}

func (l locator) kustomization(ctx context.Context, key types.NamespacedName) (Where, error) {
	var ks kustomizev1.Kustomization
	if err := l.c.Get(ctx, key, &ks); err != nil {
		return Where{}, fmt.Errorf("reading Kustomization %s: %w", key, err)
	}
	ref := ks.Spec.SourceRef
	if ref.Kind != sourcev1.GitRepositoryKind {
		return Where{}, fmt.Errorf("the Kustomization %s builds from a %s (spec.sourceRef), not a GitRepository: no pull request can change it", key, ref.Kind)
	}
	w, err := l.gitRepository(ctx, key.Namespace, ref.Namespace, ref.Name)
	if err != nil {
		return Where{}, fmt.Errorf("the Kustomization %s: %w", key, err)
	}
	w.Dir = repoPath(ks.Spec.Path)
	return w, nil
}

func (l locator) helmRelease(ctx context.Context, key types.NamespacedName) (Where, error) {
	var hr helmv2.HelmRelease
	if err := l.c.Get(ctx, key, &hr); err != nil {
		return Where{}, fmt.Errorf("reading HelmRelease %s: %w", key, err)
	}
	if hr.Spec.Chart == nil || hr.Spec.Chart.Spec.SourceRef.Kind != sourcev1.GitRepositoryKind {
		return Where{}, fmt.Errorf("HelmRelease %s: its chart is not from a GitRepository (spec.chart.spec.sourceRef): its values are not in a file of the chart's repository", key)
	}
	spec := hr.Spec.Chart.Spec
	w, err := l.gitRepository(ctx, key.Namespace, spec.SourceRef.Namespace, spec.SourceRef.Name)
	if err != nil {
		return Where{}, fmt.Errorf("HelmRelease %s: %w", key, err)
	}
	w.Chart = repoPath(spec.Chart)
	for _, f := range spec.ValuesFiles {
		w.ValuesFiles = append(w.ValuesFiles, repoPath(f))
	}
	w.Release = types.NamespacedName{Namespace: hr.GetReleaseNamespace(), Name: hr.GetReleaseName()}
	return w, nil
}

func (l locator) application(ctx context.Context, key types.NamespacedName) (Where, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(argocd.ApplicationGVK)
	if err := l.c.Get(ctx, key, u); err != nil {
		return Where{}, fmt.Errorf("reading Application %s: %w", key, err)
	}
	g, err := argocd.GitSourceOf(u)
	if err != nil {
		return Where{}, fmt.Errorf("the Application %s: %w", key, err)
	}
	branch, err := argoBranch(g.TargetRevision)
	if err != nil {
		return Where{}, fmt.Errorf("the Application %s: spec.source.targetRevision %q %w: there is no branch to propose a change to", key, g.TargetRevision, err)
	}
	w := Where{Repository: g.RepoURL, Branch: branch, Dir: repoPath(g.Path), DetectChart: true, InlineValues: g.HelmInlineValues, Release: g.Release}
	for _, f := range g.HelmValueFiles {
		w.ValuesFiles = append(w.ValuesFiles, repoPath(path.Join(w.Dir, f)))
	}
	return w, nil
}

// commitSHA is a full commit SHA (SHA-1 or SHA-256), which Argo CD takes
// as a fixed revision.
var commitSHA = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// argoBranch is the branch an Argo CD targetRevision follows:
// DefaultBranch for HEAD (or none), the branch of refs/heads/..., and a
// name taken as a branch; a commit or a tag follows none.
func argoBranch(rev string) (string, error) {
	switch {
	case rev == "" || rev == "HEAD":
		return DefaultBranch, nil
	case commitSHA.MatchString(rev), strings.HasPrefix(rev, "refs/tags/"):
		return "", ErrNoBranch
	}
	return strings.TrimPrefix(rev, "refs/heads/"), nil
}

// gitRepository is where the GitRepository name of namespace ns (the
// tool object's when empty) points, for a tool object of namespace from.
func (l locator) gitRepository(ctx context.Context, from, ns, name string) (Where, error) {
	if ns == "" {
		ns = from
	}
	if l.noCrossNamespaceRefs && ns != from {
		return Where{}, fmt.Errorf("its source is in namespace %s: cross-namespace references are not allowed (flux.noCrossNamespaceRefs)", ns)
	}
	key := types.NamespacedName{Namespace: ns, Name: name}
	var repo sourcev1.GitRepository
	if err := l.c.Get(ctx, key, &repo); err != nil {
		return Where{}, fmt.Errorf("reading GitRepository %s: %w", key, err)
	}
	w := Where{Repository: repo.Spec.URL, Branch: fluxDefaultBranch}
	if r := repo.Spec.Reference; r != nil {
		switch {
		case r.Commit != "" || r.Tag != "" || r.SemVer != "" || r.Name != "" && !strings.HasPrefix(r.Name, "refs/heads/"):
			return Where{}, fmt.Errorf("GitRepository %s %w (spec.ref): there is no branch to propose a change to", key, ErrNoBranch)
		case r.Name != "":
			w.Branch = strings.TrimPrefix(r.Name, "refs/heads/")
		case r.Branch != "":
			w.Branch = r.Branch
		}
	}
	return w, nil
}

// repoPath is a path as Flux takes it, relative to the repository's root
// ("./" or not) and kept inside it as Flux keeps it (securejoin: ".." stops
// at the root), from the root without a leading slash; "" is the root.
func repoPath(p string) string {
	return strings.TrimPrefix(path.Clean("/"+p), "/")
}
