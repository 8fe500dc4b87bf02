package argocd

import (
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/reconciler/converge"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// automated reports whether Argo CD syncs the application on its own
// (syncPolicy.automated present and not disabled by enabled: false).
func (a *application) automated() bool {
	p := a.Spec.SyncPolicy
	return p != nil && p.Automated != nil && (p.Automated.Enabled == nil || *p.Automated.Enabled)
}

// autoPrune is syncPolicy.automated.prune: a sync claimwarden starts for an
// automated application prunes as the automated sync would.
func (a *application) autoPrune() bool {
	p := a.Spec.SyncPolicy
	return p != nil && p.Automated != nil && p.Automated.Prune != nil && *p.Automated.Prune
}

// multiSource reports whether the application uses spec.sources, which
// takes precedence over spec.source in Argo CD.
func (a *application) multiSource() bool { return len(a.Spec.Sources) > 0 }

// revisions are the revisions the application was compared at, one per source.
func (a *application) revisions() []string {
	if a.multiSource() {
		return a.Status.Sync.Revisions
	}
	return []string{a.Status.Sync.Revision}
}

// revisionKey joins the revisions: the identity of what claimwarden proposes from.
func (a *application) revisionKey() string { return strings.Join(a.revisions(), ",") }

// provenance is the repository and revision commit statuses go to. A
// single source is used when it is a Git repository (a Helm chart
// repository has no commits). Of several sources the first Git directory
// wins, else the first Git source (a ref source holding Helm values, where a
// claim size usually changes); none when all are charts. The repository
// never carries user information (proposal.RepositoryURL).
func (a *application) provenance() (repository, revision string) {
	if !a.multiSource() {
		if s := a.Spec.Source; s != nil && s.Chart == "" {
			return proposal.RepositoryURL(s.RepoURL), a.Status.Sync.Revision
		}
		return "", a.Status.Sync.Revision
	}
	pick := -1
	for i, s := range a.Spec.Sources {
		if s.Chart != "" {
			continue
		}
		if s.Path != "" {
			pick = i
			break
		}
		if pick < 0 {
			pick = i
		}
	}
	if pick < 0 || pick >= len(a.Status.Sync.Revisions) {
		return "", a.revisionKey()
	}
	return proposal.RepositoryURL(a.Spec.Sources[pick].RepoURL), a.Status.Sync.Revisions[pick]
}

// templateLabelKeys are the label keys Argo CD's own kustomize options put
// into every template (spec.source.kustomize.commonLabels, for each
// source): never copied onto claims. Argo CD's tracking label and
// annotation go on the top-level metadata only.
func (a *application) templateLabelKeys() []string {
	keys := map[string]bool{}
	srcs := a.Spec.Sources
	if !a.multiSource() && a.Spec.Source != nil {
		srcs = []appSource{*a.Spec.Source}
	}
	for _, s := range srcs {
		if s.Kustomize != nil {
			for k := range s.Kustomize.CommonLabels {
				keys[k] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(keys))
}

// syncing reports whether a sync operation is set or still running: another
// sync cannot start before it ends.
func (a *application) syncing() bool {
	if a.Operation != nil {
		return true
	}
	s := a.Status.OperationState
	return s != nil && (s.Phase == phaseRunning || s.Phase == phaseTerminating)
}

// blocked returns the StatefulSets whose sync is blocked at the compared
// revision, sorted, and whether a sync attempt failed on them. Nothing is
// blocked unless the application is OutOfSync. An automated application
// attempts every OutOfSync StatefulSet, so each is a candidate before the
// attempt fails; a manual one only once a sync of this revision failed with
// the API server's refusal: until someone syncs, the change is not wanted.
func (a *application) blocked() (keys []types.NamespacedName, failed bool) {
	if a.Status.Sync.Status != syncStatusOutOfSync {
		return nil, false
	}
	set := map[types.NamespacedName]bool{}
	if a.automated() {
		for _, r := range a.Status.Resources {
			if isStatefulSet(r.Group, r.Kind) && r.Status == syncStatusOutOfSync {
				set[types.NamespacedName{Namespace: r.Namespace, Name: r.Name}] = true
			}
		}
	}
	if op := a.Status.OperationState; op != nil && op.SyncResult != nil && a.sameRevision(op.SyncResult) {
		for _, r := range op.SyncResult.Resources {
			if isStatefulSet(r.Group, r.Kind) && r.Status == resultSyncFailed && converge.IsTemplatesImmutableMessage(r.Message) {
				set[types.NamespacedName{Namespace: r.Namespace, Name: r.Name}] = true
				failed = true
			}
		}
	}
	keys = slices.SortedFunc(maps.Keys(set), func(x, y types.NamespacedName) int {
		return strings.Compare(x.String(), y.String())
	})
	return keys, failed
}

// sameRevision reports whether a sync result is for the compared revision.
func (a *application) sameRevision(r *syncResult) bool {
	if a.multiSource() {
		return len(r.Revisions) > 0 && slices.Equal(r.Revisions, a.Status.Sync.Revisions)
	}
	return r.Revision != "" && r.Revision == a.Status.Sync.Revision
}

func isStatefulSet(group, kind string) bool {
	return group == appsv1.GroupName && kind == "StatefulSet"
}
