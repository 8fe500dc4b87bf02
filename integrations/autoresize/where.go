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
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/argocd"
	"github.com/claimwarden/claimwarden/integrations/gitedit"
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
	// (relative to Dir then).
	DetectChart bool
	// HelmValues are the values the tool object sets itself, as YAML, in
	// the order the tool merges them over the values files (a HelmRelease's
	// spec.values; an Application's helm.values, then helm.valuesObject).
	HelmValues [][]byte
	// Inline names the last of those values in the tool object's own
	// manifest when a parent tool object applies it from Git (a
	// Kustomization a HelmRelease, an Application an Application):
	// Repository, Branch and Dir are then the parent's, and the value that
	// sets the size is edited in the manifest under Dir. ChartRepository
	// and ChartBranch are the chart's, when elsewhere.
	Inline                       *gitedit.Inline
	ChartRepository, ChartBranch string
	// HelmChart is, for a chart from a Helm repository, the HelmChart
	// whose artifact holds it (Chart is its directory there); only values
	// the HelmRelease sets itself can be edited then.
	HelmChart *types.NamespacedName
	// ChartByVersion names the HelmRelease whose chart in Git Flux
	// packages anew only when the version in its Chart.yaml changes
	// (reconcileStrategy ChartVersion, the default): an edit of a file
	// the chart's artifact carries takes effect only with the version
	// bumped (BumpChart).
	ChartByVersion *types.NamespacedName
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

// Locator finds where tool objects read their StatefulSets from in Git.
type Locator struct {
	Reader client.Reader
	// Parents are the tools whose objects may apply another tool object (a
	// Kustomization a HelmRelease, an Application an Application): the
	// values a tool object sets itself are edited where its parent
	// applies it from.
	Parents []Owner
	// NoCrossNamespaceRefs mirrors the Flux controllers' flag: a source
	// in another namespace than the tool object's is refused, as Flux
	// refuses it.
	NoCrossNamespaceRefs bool
}

// Locate is where the tool object of src reads its StatefulSets from;
// obj is that object when the caller read it already (nil: it is read).
func (l Locator) Locate(ctx context.Context, src v1alpha1.Source, obj client.Object) (Where, error) {
	if obj == nil {
		switch src.Kind {
		case kustomizev1.KustomizationKind:
			obj = &kustomizev1.Kustomization{}
		case helmv2.HelmReleaseKind:
			obj = &helmv2.HelmRelease{}
		case argocd.ApplicationKind:
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(argocd.ApplicationGVK)
			obj = u
		default:
			return Where{}, fmt.Errorf("proposed by a %s: autoresize proposes pull requests for Flux Kustomizations, HelmReleases and Argo CD Applications", src.Kind)
		}
		key := types.NamespacedName{Namespace: src.Namespace, Name: src.Name}
		if err := l.Reader.Get(ctx, key, obj); err != nil {
			return Where{}, fmt.Errorf("reading %s %s: %w", src.Kind, key, err)
		}
	}
	switch o := obj.(type) {
	case *kustomizev1.Kustomization:
		return l.kustomizationSource(ctx, o)
	case *helmv2.HelmRelease:
		return l.helmRelease(ctx, o)
	case *unstructured.Unstructured:
		return l.application(ctx, o)
	}
	return Where{}, fmt.Errorf("a %T is no tool object autoresize locates", obj)
}

func (l Locator) kustomizationSource(ctx context.Context, ks *kustomizev1.Kustomization) (Where, error) {
	key := client.ObjectKeyFromObject(ks)
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

func (l Locator) helmRelease(ctx context.Context, hr *helmv2.HelmRelease) (Where, error) {
	key := client.ObjectKeyFromObject(hr)
	if hr.Spec.Chart == nil {
		return Where{}, fmt.Errorf("HelmRelease %s: no spec.chart (a chartRef): its chart is not in a Git repository or a Helm repository autoresize reads", key)
	}
	w, err := l.helmChart(ctx, hr)
	if err != nil {
		return Where{}, fmt.Errorf("HelmRelease %s: %w", key, err)
	}
	w.Release = types.NamespacedName{Namespace: hr.GetReleaseNamespace(), Name: hr.GetReleaseName()}
	if !setsValues(hr.Spec.Values) {
		if w.HelmChart != nil {
			return Where{}, fmt.Errorf("HelmRelease %s: its chart is from a HelmRepository and it sets no spec.values: no file in Git sets the size", key)
		}
		return w, nil
	}
	values, err := yaml.JSONToYAML(hr.Spec.Values.Raw)
	if err != nil {
		return Where{}, fmt.Errorf("HelmRelease %s: spec.values: %w", key, err)
	}
	w.HelmValues = [][]byte{values}
	m, ok, err := l.manifestOf(ctx, hr, schema.GroupKind{Group: helmv2.GroupVersion.Group, Kind: helmv2.HelmReleaseKind})
	switch {
	case err != nil:
		return Where{}, err
	case !ok && w.HelmChart != nil:
		return Where{}, fmt.Errorf("HelmRelease %s: its chart is from a HelmRepository and no Flux Kustomization applies it from Git: no file in Git sets the size", key)
	case !ok:
		return w, nil
	}
	m.Chart, m.ValuesFiles, m.Release, m.HelmValues, m.HelmChart, m.ChartByVersion = w.Chart, w.ValuesFiles, w.Release, w.HelmValues, w.HelmChart, w.ChartByVersion
	m.Inline = &gitedit.Inline{Kind: helmv2.HelmReleaseKind, Namespace: hr.Namespace, Name: hr.Name, Field: []string{"spec", "values"}}
	if w.HelmChart != nil {
		return m, nil
	}
	return m.chartIn(w), nil
}

// helmChart is where a HelmRelease's chart is: in a GitRepository, or in
// a HelmRepository, read from the HelmChart source-controller made of it
// (status.helmChart), with its values files inside the chart.
func (l Locator) helmChart(ctx context.Context, hr *helmv2.HelmRelease) (Where, error) {
	spec := hr.Spec.Chart.Spec
	switch spec.SourceRef.Kind {
	case sourcev1.GitRepositoryKind:
		w, err := l.gitRepository(ctx, hr.Namespace, spec.SourceRef.Namespace, spec.SourceRef.Name)
		if err != nil {
			return Where{}, err
		}
		w.Chart = repoPath(spec.Chart)
		for _, f := range spec.ValuesFiles {
			w.ValuesFiles = append(w.ValuesFiles, repoPath(f))
		}
		if spec.ReconcileStrategy != sourcev1.ReconcileStrategyRevision {
			w.ChartByVersion = &types.NamespacedName{Namespace: hr.Namespace, Name: hr.Name}
		}
		return w, nil
	case sourcev1.HelmRepositoryKind:
		if err := l.crossNamespace(hr.Namespace, spec.SourceRef.Namespace); err != nil {
			return Where{}, err
		}
		ns, name, ok := strings.Cut(hr.Status.HelmChart, "/")
		if !ok {
			return Where{}, errors.New("its chart is from a HelmRepository and source-controller has made no HelmChart of it yet (status.helmChart)")
		}
		w := Where{HelmChart: &types.NamespacedName{Namespace: ns, Name: name}, Chart: path.Base(repoPath(spec.Chart))}
		for _, f := range spec.ValuesFiles {
			w.ValuesFiles = append(w.ValuesFiles, path.Join(w.Chart, repoPath(f)))
		}
		return w, nil
	}
	return Where{}, fmt.Errorf("its chart is from a %s (spec.chart.spec.sourceRef): autoresize reads charts from GitRepositories and HelmRepositories", spec.SourceRef.Kind)
}

// chartIn is w with the chart's repository and branch, c's, named when
// they are not w's.
func (w Where) chartIn(c Where) Where {
	if w.Repository != c.Repository || w.Branch != c.Branch {
		w.ChartRepository, w.ChartBranch = c.Repository, c.Branch
	}
	return w
}

// manifestOf is where the tool object obj of kind gk is in Git: where the
// parent tool object that applies it reads from (its repository, branch
// and path). The parent is found as a StatefulSet's tool is, by what obj
// says (labels, tracking-id; whoever edits obj can set them), and its own
// record must confirm it. False when obj names no parent. The parent's own
// values are not looked for: a chain of parents is not followed.
func (l Locator) manifestOf(ctx context.Context, obj client.Object, gk schema.GroupKind) (Where, bool, error) {
	for _, o := range l.Parents {
		p, ok := o.Tool.(applier)
		if !ok {
			continue
		}
		key, ok := o.Find(obj)
		if !ok {
			continue
		}
		parent := o.NewObject()
		if err := l.Reader.Get(ctx, key, parent); err != nil {
			return Where{}, false, fmt.Errorf("%s %s/%s names %s %s: %w", gk.Kind, obj.GetNamespace(), obj.GetName(), o.Kind, key, err)
		}
		if err := p.Applies(ctx, parent, gk, obj); err != nil {
			return Where{}, false, fmt.Errorf("%s %s/%s names %s %s, which does not apply it: %w", gk.Kind, obj.GetNamespace(), obj.GetName(), o.Kind, key, err)
		}
		var w Where
		var err error
		switch parent := parent.(type) {
		case *kustomizev1.Kustomization:
			w, err = l.kustomizationSource(ctx, parent)
		case *unstructured.Unstructured:
			w, _, err = applicationSource(parent)
		default:
			err = fmt.Errorf("a %s applies it, from no Git source autoresize reads", o.Kind)
		}
		return w, true, err
	}
	return Where{}, false, nil
}

// applier is a tool whose objects apply tool objects.
type applier interface {
	Applies(ctx context.Context, parent client.Object, gk schema.GroupKind, obj metav1.Object) error
}

// setsValues reports whether a HelmRelease's spec.values sets any.
func setsValues(v *apiextensionsv1.JSON) bool {
	if v == nil {
		return false
	}
	raw := strings.TrimSpace(string(v.Raw))
	return raw != "" && raw != "null" && raw != "{}"
}

func (l Locator) application(ctx context.Context, u *unstructured.Unstructured) (Where, error) {
	key := client.ObjectKeyFromObject(u)
	w, g, err := applicationSource(u)
	if err != nil || !g.HelmInlineValues {
		return w, err
	}
	// Argo CD merges the values files, then helm.values, then
	// helm.valuesObject; the last of them is the one edited.
	field := "values"
	if g.HelmValues != "" {
		w.HelmValues = append(w.HelmValues, []byte(g.HelmValues))
	}
	if g.HelmValuesObject != nil {
		obj, err := yaml.JSONToYAML(g.HelmValuesObject)
		if err != nil {
			return Where{}, fmt.Errorf("the Application %s: spec.source.helm.valuesObject: %w", key, err)
		}
		w.HelmValues, field = append(w.HelmValues, obj), "valuesObject"
	}
	m, ok, err := l.manifestOf(ctx, u, argocd.ApplicationGVK.GroupKind())
	if err != nil || !ok {
		return w, err
	}
	m.Chart, m.ValuesFiles, m.Release, m.HelmValues = w.Dir, w.ValuesFiles, w.Release, w.HelmValues
	m.Inline = &gitedit.Inline{Kind: argocd.ApplicationKind, Namespace: key.Namespace, Name: key.Name, Field: []string{"spec", "source", "helm", field}}
	return m.chartIn(w), nil
}

// applicationSource is where the Application u reads from.
func applicationSource(u *unstructured.Unstructured) (Where, argocd.GitSource, error) {
	key := client.ObjectKeyFromObject(u)
	g, err := argocd.GitSourceOf(u)
	if err != nil {
		return Where{}, g, fmt.Errorf("the Application %s: %w", key, err)
	}
	branch, err := argoBranch(g.TargetRevision)
	if err != nil {
		return Where{}, g, fmt.Errorf("the Application %s: spec.source.targetRevision %q %w: there is no branch to propose a change to", key, g.TargetRevision, err)
	}
	w := Where{Repository: g.RepoURL, Branch: branch, Dir: repoPath(g.Path), DetectChart: true, Release: g.Release}
	for _, f := range g.HelmValueFiles {
		w.ValuesFiles = append(w.ValuesFiles, repoPath(path.Join(w.Dir, f)))
	}
	return w, g, nil
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

// crossNamespace says why a tool object of namespace from may not read a
// source of namespace ns ("" for its own), as the Flux controllers refuse
// it under --no-cross-namespace-refs; nil when it may.
func (l Locator) crossNamespace(from, ns string) error {
	if l.NoCrossNamespaceRefs && ns != "" && ns != from {
		return fmt.Errorf("its source is in namespace %s: cross-namespace references are not allowed (flux.noCrossNamespaceRefs)", ns)
	}
	return nil
}

// gitRepository is where the GitRepository name of namespace ns (the
// tool object's when empty) points, for a tool object of namespace from.
func (l Locator) gitRepository(ctx context.Context, from, ns, name string) (Where, error) {
	if err := l.crossNamespace(from, ns); err != nil {
		return Where{}, err
	}
	if ns == "" {
		ns = from
	}
	key := types.NamespacedName{Namespace: ns, Name: name}
	var repo sourcev1.GitRepository
	if err := l.Reader.Get(ctx, key, &repo); err != nil {
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
