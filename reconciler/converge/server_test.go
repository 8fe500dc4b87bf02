package converge_test

import (
	"errors"
	"testing"

	"github.com/claimwarden/claimwarden/reconciler/converge"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The unit tests build the refusal as the server code does; this checks the
// running v1.37 server's actual answer, declarative validation included.
func TestRealServerRefusalIsRecognised(t *testing.T) {
	ctx := ctxFor(t)
	c, _ := cluster(t)
	ns := namespaceFor(ctx, t, c)
	live := readyStatefulSet(ctx, t, c, ns)

	changed := live.DeepCopy()
	changed.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
	err := c.Update(ctx, changed, client.DryRunAll)
	if !converge.IsImmutableTemplateError(err) {
		t.Fatalf("server answer to a template change not recognised: %v", err)
	}

	// A change the server accepts is not mistaken for one.
	tuned := live.DeepCopy()
	tuned.Spec.MinReadySeconds = 5
	if err := c.Update(ctx, tuned, client.DryRunAll); err != nil || converge.IsImmutableTemplateError(err) {
		t.Fatalf("mutable change: %v", err)
	}
}

// A new selector would leave the running Pods unadopted and the new
// StatefulSet unable to create Pods of the same names: refused up front.
func TestConvergeRefusesSelectorChange(t *testing.T) {
	ctx := ctxFor(t)
	c, _ := cluster(t)
	ns := namespaceFor(ctx, t, c)
	live := readyStatefulSet(ctx, t, c, ns)
	desired := manifest(ns, "2Gi")
	desired.Spec.Selector.MatchLabels = map[string]string{"app": stsName, "tier": "db"}
	desired.Spec.Template.Labels = desired.Spec.Selector.MatchLabels
	j := cmJournal{c}

	_, err := converge.New(converge.Options{Client: c, Journal: j, JournalKey: staticKey}).Converge(ctx, live, desired)
	if !errors.Is(err, converge.ErrSelectorChanged) {
		t.Fatalf("Converge = %v, want ErrSelectorChanged", err)
	}
	assertUntouched(ctx, t, c, ns, live)
	assertNoRecord(ctx, t, j, ns)
}
