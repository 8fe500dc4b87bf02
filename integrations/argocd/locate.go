package argocd

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/claimwarden/claimwarden/reconciler/source"
)

var _ source.Parent = (*Applications)(nil)
var _ source.Locator = (*Applications)(nil)

// Names implements source.AtRest: the Application Argo CD's tracking-id
// annotation on live names (whoever edits live can set it: Manages
// confirms).
func (a *Applications) Names(live metav1.Object) (types.NamespacedName, bool) {
	return trackedApplication(live, a.controlPlane)
}

// ManagesAtRest implements source.AtRest: the Application's destination
// is the cluster live was read in, and the AppProject and argocd-cm
// decide, whether or not a proposal names live; argocd-server is not asked.
func (a *Applications) ManagesAtRest(ctx context.Context, obj client.Object, cluster string, live *appsv1.StatefulSet) error {
	u, app, c, err := a.destination(obj)
	if err != nil {
		return err
	}
	if c.Name != cluster {
		return fmt.Errorf("the Application %s/%s applies to %s, not %s", u.GetNamespace(), u.GetName(), source.DescribeCluster(c.Name), source.DescribeCluster(cluster))
	}
	return a.appliesIn(ctx, u, app, c, schema.GroupKind(statefulSetKind), live)
}

// Locate implements source.Locator: the Application's one Git source and
// path; values it sets itself (helm.values, helm.valuesObject) are edited
// in its manifest, where the Application that applies it reads from
// (parents).
func (a *Applications) Locate(ctx context.Context, obj client.Object, parents source.Parents) (source.Where, error) {
	u := obj.(*unstructured.Unstructured)
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
			return source.Where{}, fmt.Errorf("the Application %s: spec.source.helm.valuesObject: %w", key, err)
		}
		w.HelmValues, field = append(w.HelmValues, obj), "valuesObject"
	}
	m, ok, err := parents(ctx, u, ApplicationGVK.GroupKind())
	if err != nil || !ok {
		return w, err
	}
	m.Chart, m.ValuesFiles, m.Release, m.HelmValues = w.Dir, w.ValuesFiles, w.Release, w.HelmValues
	m.Inline = &source.Inline{Kind: ApplicationKind, Namespace: key.Namespace, Name: key.Name, Field: []string{"spec", "source", "helm", field}}
	return m.ChartIn(w), nil
}

// LocateSource implements source.Parent: where the Application obj reads
// from, without the values it sets itself.
func (*Applications) LocateSource(_ context.Context, obj client.Object) (source.Where, error) {
	w, _, err := applicationSource(obj.(*unstructured.Unstructured))
	return w, err
}

// applicationSource is where the Application u reads from.
func applicationSource(u *unstructured.Unstructured) (source.Where, GitSource, error) {
	key := client.ObjectKeyFromObject(u)
	g, err := gitSourceOf(u)
	if err != nil {
		return source.Where{}, g, fmt.Errorf("the Application %s: %w", key, err)
	}
	branch, err := argoBranch(g.TargetRevision)
	if err != nil {
		return source.Where{}, g, fmt.Errorf("the Application %s: spec.source.targetRevision %q %w: there is no branch to propose a change to", key, g.TargetRevision, err)
	}
	w := source.Where{Repository: g.RepoURL, Branch: branch, Dir: source.RepoPath(g.Path), DetectChart: true, Release: g.Release}
	for _, f := range g.HelmValueFiles {
		w.ValuesFiles = append(w.ValuesFiles, source.RepoPath(path.Join(w.Dir, f)))
	}
	return w, g, nil
}

// commitSHA is a full commit SHA (SHA-1 or SHA-256), which Argo CD takes
// as a fixed revision.
var commitSHA = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// argoBranch is the branch an Argo CD targetRevision follows:
// source.DefaultBranch for HEAD (or none), the branch of refs/heads/...,
// and a name taken as a branch; a commit or a tag follows none.
func argoBranch(rev string) (string, error) {
	switch {
	case rev == "" || rev == "HEAD":
		return source.DefaultBranch, nil
	case commitSHA.MatchString(rev), strings.HasPrefix(rev, "refs/tags/"):
		return "", source.ErrNoBranch
	}
	return strings.TrimPrefix(rev, "refs/heads/"), nil
}
