//go:build chaos

package e2e

import (
	"context"
	"flag"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

var chaosBurst = flag.Int("chaos.burst", 20, "commits of TestChaos's superseding fault, each pushed as the StatefulSet is re-created for the one before")

// supersedeBurst pushes commits back to back, each the moment claimwarden
// re-created the StatefulSet for the one before: through Flux, the sequence
// of kubernetes/kubernetes#131284 (orphan delete, re-create with other claim
// templates, at once another orphan delete). Every commit but the last is
// superseded; no Pod or ControllerRevision may be lost (the recorder), and
// each commit with a status must get exactly one final one (error for the
// superseded, success for the last). It returns when the burst was pushed.
func (s *chaosSet) supersedeBurst(ctx context.Context, t *testing.T, c *controller) {
	t.Helper()
	uid := s.uid(ctx, t)
	for i := range *chaosBurst {
		// The claims lag behind while each commit supersedes the last (at
		// most one is patched before the next re-create), and max-step
		// (100%) judges the growth from where they are: 32Mi a commit keeps
		// a burst of 20 at +40% of 1.5Gi.
		s.bumpBy(ctx, t, resource.MustParse("32Mi"))
		if i == *chaosBurst-1 {
			return
		}
		old := uid
		waitFor(t, "the re-create of "+s.sts.String()+" for "+s.size.String(), []*controller{c}, func(ctx context.Context) (bool, error) {
			now := &appsv1.StatefulSet{}
			if err := s.cl.admin.Get(ctx, s.sts, now); err != nil {
				return false, err
			}
			uid = now.UID
			return uid != old, nil
		})
	}
}

// uid is the StatefulSet's UID now.
func (s *chaosSet) uid(ctx context.Context, t *testing.T) types.UID {
	t.Helper()
	sts := &appsv1.StatefulSet{}
	if err := s.cl.admin.Get(ctx, s.sts, sts); err != nil {
		t.Fatal(err)
	}
	return sts.UID
}
