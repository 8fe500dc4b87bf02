package rollout_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// unrelatedClaims and unrelatedStatefulSets crowd the namespace of the
// StatefulSet under test.
const (
	unrelatedClaims       = 1000
	unrelatedStatefulSets = 20
)

// A namespace crowded with 1,000 claims and 20 StatefulSets of its own does
// not change what one StatefulSet's rollout reads or writes: every List the
// controller makes there returns one StatefulSet's objects at most, a bump
// of 3 claims costs exactly 3 claim patches, and the rollout's status is
// written at most once per resize step plus once at completion.
func TestRolloutWorkDoesNotGrowWithTheNamespace(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	crowd(t, c, ns)
	sts := fixtures.StatefulSet(ns, "web", 3, classExpandable, "1Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	before := controllerClient.writesIn(ns)

	if err := fixtures.ReplaceTemplates(context.Background(), c, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, c, key, "Ready at 2Gi", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Compatible == 3 && v.Status.Claims[0].To == "2Gi"
	})

	for _, l := range controllerClient.listsIn(ns) {
		// (The namespace's creation lists its StatefulSets once: its labels
		// are policy input. That returns more than 3 once it is crowded.)
		if l.Selector == "" && strings.Contains(l.Type, "PersistentVolumeClaim") {
			t.Errorf("a List of %s read the whole namespace (%d items)", l.Type, l.Items)
		}
		if limit := 3; l.Items > limit {
			t.Errorf("a List of %s (%s) returned %d items, more than one StatefulSet's %d", l.Type, l.Selector, l.Items, limit)
		}
	}
	if len(controllerClient.listsIn(ns)) == 0 {
		t.Error("no List in the namespace was seen: the client log is not the controller's")
	}

	after := controllerClient.writesIn(ns)
	var claimPatches, statusWrites int
	for k, n := range after {
		n -= before[k]
		switch {
		case strings.HasPrefix(k, "apply *v1.PersistentVolumeClaimApplyConfiguration/data-web-"):
			claimPatches += n
			if n != 1 {
				t.Errorf("%s: %d writes, want 1", k, n)
			}
		case k == "status patch of claims *v1alpha1.VolumeClaimRollout/web":
			statusWrites += n
		case strings.Contains(k, "PersistentVolumeClaim") && !strings.Contains(k, "/data-web-") && n > 0:
			t.Errorf("%s: %d writes to a claim that is not web's", k, n)
		}
	}
	if claimPatches != 3 {
		t.Errorf("%d claim patches for 3 claims changed, want 3 (writes %v)", claimPatches, after)
	}
	// 3 resize steps (one claim at a time) plus the completion. A fifth
	// write was seen once under load: two reconciles on the same cached
	// rollout a second apart stamped their conditions with different
	// seconds; statusSum now ignores those times (status_sum_test.go).
	if limit := 3 + 1; statusWrites > limit || statusWrites == 0 {
		t.Errorf("%d status writes for 3 resize steps, want 1..%d", statusWrites, limit)
	}
	t.Logf("bump of 3 claims among %d: %d claim patches, %d status writes", unrelatedClaims, claimPatches, statusWrites)
}

// crowd creates the unrelated claims, named like claims of StatefulSets
// that do not exist (data-gone-<n>-0), and unrelated StatefulSets without
// replicas, which the controller manages too.
func crowd(t *testing.T, c client.Client, ns string) {
	t.Helper()
	ctx := context.Background()
	var g errgroup.Group
	g.SetLimit(8)
	for i := range unrelatedClaims {
		g.Go(func() error {
			return c.Create(ctx, &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("data-gone-%d-0", i)},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: ptr.To(classUnbound),
					Resources: corev1.VolumeResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
					},
				},
			})
		})
	}
	for i := range unrelatedStatefulSets {
		g.Go(func() error {
			return c.Create(ctx, fixtures.StatefulSet(ns, fmt.Sprintf("idle-%d", i), 0, classExpandable, "1Gi"))
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}
