package rollout_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// A proposal's templates, recorded before the re-create, and the StatefulSet
// the API server created and defaulted from them hash alike: a controller
// that takes over (a restart, a new leader) finds the recorded proposal, and
// its commit, by the live templates. Templates that differ hash apart.
func TestTemplatesHashSurvivesServerDefaults(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	proposed := fixtures.StatefulSet(ns, "hashed", 0, classExpandable, "2048Mi")
	proposed.Spec.VolumeClaimTemplates[0].Spec.VolumeMode = nil
	want := rollout.TemplatesHash(proposed)
	if err := c.Create(context.Background(), proposed.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	var live appsv1.StatefulSet
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(proposed), &live); err != nil {
		t.Fatal(err)
	}
	tmpl := live.Spec.VolumeClaimTemplates[0]
	if tmpl.Spec.VolumeMode == nil {
		t.Fatal("the API server did not default the template's volumeMode: the test proves nothing")
	}
	if got := rollout.TemplatesHash(&live); got != want {
		t.Errorf("hash of the created StatefulSet %s, of the proposal %s: want them equal", got, want)
	}
	bigger := live.DeepCopy()
	bigger.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests["storage"] = resource.MustParse("3Gi")
	if rollout.TemplatesHash(bigger) == want {
		t.Error("templates of another size hash alike")
	}
}
