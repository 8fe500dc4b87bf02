package commitstatus

import (
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// targetOf is where a StatefulSet's commit status goes, if anywhere. A
// source without repository or revision is silently not posted; one whose
// revision names no commit, or whose repository cannot be parsed, is logged
// once per repository@revision.
func (s *CommitStatusSink) targetOf(log logr.Logger, statefulSet types.NamespacedName, src v1alpha1.Source) (Target, bool) {
	if src.Repository == "" || src.Revision == "" {
		return Target{}, false
	}
	once := func(msg string, kv ...any) {
		if seen, _ := s.unpostable.ContainsOrAdd(src.Repository+"@"+src.Revision, struct{}{}); !seen {
			log.Info(msg, kv...)
		}
	}
	sha, ok := proposal.ParseRevision(src.Revision)
	if !ok {
		once("the revision names no commit: no commit status is posted", "revision", src.Revision)
		return Target{}, false
	}
	repo, err := githost.ParseRepositoryURL(src.Repository)
	if err != nil {
		once("no commit status is posted", "error", err.Error())
		return Target{}, false
	}
	return Target{
		Repo: repo, SHA: sha,
		Context: StatusContext(s.opts.ContextPrefix, statefulSet.Namespace, statefulSet.Name),
		Owner:   statefulSet,
	}, true
}

// recordedOf is the status a VolumeClaimRollout records as posted for its
// StatefulSet, as the sink would have remembered it.
func recordedOf(statefulSet types.NamespacedName, recorded *v1alpha1.CommitStatus) (published, bool) {
	if recorded == nil || recorded.Revision == "" || recorded.Context == "" {
		return published{}, false
	}
	repo, ok := recordedRepository(recorded.Repository)
	if !ok {
		return published{}, false
	}
	t := Target{Repo: repo, SHA: recorded.Revision, Context: recorded.Context, Owner: statefulSet}
	return published{target: t, state: outcome.State(recorded.State)}, true
}

// recordedRepository reads back the "<host>/<path>" form recordPosted
// writes. It is not a URL (it has no scheme), so ParseRepositoryURL does not
// apply; the host was already canonical when it was written.
func recordedRepository(s string) (githost.Repository, bool) {
	host, path, _ := strings.Cut(s, "/")
	slash := strings.LastIndex(path, "/")
	if host == "" || slash <= 0 || slash == len(path)-1 {
		return githost.Repository{}, false
	}
	return githost.Repository{Host: host, Path: path, Owner: path[:slash], Name: path[slash+1:]}, true
}
