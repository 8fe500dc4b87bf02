package argocd

import (
	"errors"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// GitSource is where an Application reads its manifests from in Git, for
// autoresize's pull requests: its one source's repository, revision and
// path, and for a chart there the values files (relative to the path).
type GitSource struct {
	RepoURL, TargetRevision, Path string
	HelmValueFiles                []string
	// HelmInlineValues says the Application sets values itself
	// (helm.values, helm.valuesObject): they are not in a file of the
	// repository.
	HelmInlineValues bool
	// HelmValues and HelmValuesObject are those values (helm.values, a
	// string of YAML; helm.valuesObject, as JSON), when set.
	HelmValues       string
	HelmValuesObject []byte
	// Release is the Helm release a chart renders as: helm.releaseName
	// (default the Application's name) into the destination namespace.
	Release types.NamespacedName
}

// gitSourceOf reads the Git source of an Application of one source from
// Git; an Application of several sources or of a chart from a Helm
// repository has none a file edit can change.
func gitSourceOf(u *unstructured.Unstructured) (GitSource, error) {
	app, err := applicationOf(u)
	if err != nil {
		return GitSource{}, err
	}
	src := app.Spec.Source
	switch {
	case len(app.Spec.Sources) > 0:
		return GitSource{}, errors.New("the Application has several sources (spec.sources): autoresize edits the one source of spec.source")
	case src == nil:
		return GitSource{}, errors.New("the Application has no spec.source")
	case src.Chart != "":
		return GitSource{}, errors.New("the Application's chart comes from a Helm repository (spec.source.chart): its values are not in a file of a Git repository")
	}
	g := GitSource{RepoURL: src.RepoURL, TargetRevision: src.TargetRevision, Path: src.Path,
		Release: types.NamespacedName{Namespace: app.Spec.Destination.Namespace, Name: u.GetName()}}
	if h := src.Helm; h != nil {
		g.HelmValueFiles = h.ValueFiles
		g.HelmInlineValues = strings.TrimSpace(h.Values) != "" || h.ValuesObject != nil
		g.HelmValues = h.Values
		if h.ValuesObject != nil {
			g.HelmValuesObject = *h.ValuesObject
		}
		if h.ReleaseName != "" {
			g.Release.Name = h.ReleaseName
		}
	}
	return g, nil
}

// trackedApplication is the Application whose tracking-id annotation the
// live StatefulSet carries; false when it carries none. It is what the
// StatefulSet claims, not a record: Manages confirms it.
func trackedApplication(live metav1.Object, controlPlane string) (types.NamespacedName, bool) {
	id, err := parseTrackingID(live.GetAnnotations()[annotationTrackingID])
	if err != nil || id.App == "" {
		return types.NamespacedName{}, false
	}
	if ns, name, ok := strings.Cut(id.App, "_"); ok {
		return types.NamespacedName{Namespace: ns, Name: name}, true
	}
	return types.NamespacedName{Namespace: controlPlane, Name: id.App}, true
}
