package toolkit

import (
	"context"
	"fmt"
	"strings"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/source"
)

// defaultBranch is the branch a GitRepository without a ref follows
// (source-controller's default).
const defaultBranch = "master"

// GitRepository is where the GitRepository name of namespace ns (the tool
// object's when empty) points, for a tool object of namespace from: its
// URL and the branch it follows. A cross-namespace reference is refused
// when refused (--no-cross-namespace-refs); a ref that follows no branch
// wraps source.ErrNoBranch.
func GitRepository(ctx context.Context, r client.Reader, from, ns, name string, refused bool) (source.Where, error) {
	if err := CrossNamespaceRefused(from, ns, refused); err != nil {
		return source.Where{}, fmt.Errorf("its source is in %w", err)
	}
	if ns == "" {
		ns = from
	}
	key := types.NamespacedName{Namespace: ns, Name: name}
	var repo sourcev1.GitRepository
	if err := r.Get(ctx, key, &repo); err != nil {
		return source.Where{}, fmt.Errorf("reading GitRepository %s: %w", key, err)
	}
	w := source.Where{Repository: repo.Spec.URL, Branch: defaultBranch}
	if ref := repo.Spec.Reference; ref != nil {
		switch {
		case ref.Commit != "" || ref.Tag != "" || ref.SemVer != "" || ref.Name != "" && !strings.HasPrefix(ref.Name, "refs/heads/"):
			return source.Where{}, fmt.Errorf("GitRepository %s %w (spec.ref): there is no branch to propose a change to", key, source.ErrNoBranch)
		case ref.Name != "":
			w.Branch = strings.TrimPrefix(ref.Name, "refs/heads/")
		case ref.Branch != "":
			w.Branch = ref.Branch
		}
	}
	return w, nil
}
