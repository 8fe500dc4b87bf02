package source

import (
	"context"
	"errors"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Where is where a GitOps tool reads a StatefulSet from in Git: a pull
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
	Inline                       *Inline
	ChartRepository, ChartBranch string
	// HelmChart is, for a chart from a Helm repository, the HelmChart
	// whose artifact holds it (Chart is its directory there); only values
	// the HelmRelease sets itself can be edited then.
	HelmChart *types.NamespacedName
	// ChartByVersion names the HelmRelease whose chart in Git Flux
	// packages anew only when the version in its Chart.yaml changes
	// (reconcileStrategy ChartVersion, the default): an edit of a file
	// the chart's artifact carries takes effect only with the version
	// bumped.
	ChartByVersion *types.NamespacedName
}

// Inline names the mapping of values a tool object sets in its own
// manifest: the object's kind, namespace and name, and the field path.
// Its fields are gitedit.Inline's, which converts from it.
type Inline struct {
	Kind, Namespace, Name string
	Field                 []string
}

// ChartIn is w with the chart's repository and branch, c's, named when
// they are not w's.
func (w Where) ChartIn(c Where) Where {
	if w.Repository != c.Repository || w.Branch != c.Branch {
		w.ChartRepository, w.ChartBranch = c.Repository, c.Branch
	}
	return w
}

// DefaultBranch is Where.Branch for "the repository's default branch"
// (Argo CD's targetRevision HEAD): the Git host says which.
const DefaultBranch = ""

// ErrNoBranch says the tool follows no branch (a tag, a semver range, a
// commit): there is nowhere to propose a change to.
var ErrNoBranch = errors.New("follows no branch")

// RepoPath is a path as the tools take it, relative to the repository's
// root ("./" or not) and kept inside it as Flux keeps it (securejoin: ".."
// stops at the root), from the root without a leading slash; "" is the
// root.
func RepoPath(p string) string {
	return strings.TrimPrefix(path.Clean("/"+p), "/")
}

// Locator is a tool that says where in Git its objects read their
// StatefulSets from.
type Locator interface {
	// Kind and NewObject are the tool's (Reader).
	Kind() string
	NewObject() client.Object
	// Locate is where obj reads its StatefulSets from. Values obj sets in
	// its own manifest are edited where the parent tool object that
	// applies obj reads from: parents finds it.
	Locate(ctx context.Context, obj client.Object, parents Parents) (Where, error)
}

// Parents is where the parent tool object that applies obj, of kind gk,
// reads from (its repository, branch and path); false when obj names no
// parent. The parent's own values are not looked for: a chain of parents
// is not followed.
type Parents func(ctx context.Context, obj client.Object, gk schema.GroupKind) (Where, bool, error)
