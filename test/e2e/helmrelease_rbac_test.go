package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/fluxenv"
)

// TestHelmPatchPinnedToRequests proves the admission policy of
// config/components/helm: claimwarden's identity may set the three reconcile
// request annotations of a HelmRelease and change nothing else of it,
// although RBAC grants it patch.
func TestHelmPatchPinnedToRequests(t *testing.T) {
	cl := started(t)
	startFlux(t) // the HelmRelease CRD
	ctx := context.Background()
	ns := namespace(t, cl.admin)
	hr := fluxenv.HelmRelease(ns, "pinned", "absent", "./chart")
	hr.Spec.Suspend = true // nothing for helm-controller to do with it
	if err := cl.admin.Create(ctx, hr); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", cl.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	sa, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: "pinned"}
	patch := func(c client.Client, body string) error {
		obj := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}}
		return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(body)))
	}
	refused := func(err error) bool {
		return err != nil && strings.Contains(err.Error(), "claimwarden may only set the reconcile request annotations of a HelmRelease")
	}
	n := 0
	waitFor(t, "the admission policy to refuse a spec change by claimwarden's ServiceAccount", nil, func(context.Context) (bool, error) {
		n++
		err := patch(sa, fmt.Sprintf(`{"spec":{"interval":"%dm"}}`, n))
		return refused(err), err
	})
	token := "2026-12-01T00:00:00Z"
	if err := patch(sa, `{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"`+token+`","reconcile.fluxcd.io/resetAt":"`+token+`","reconcile.fluxcd.io/forceAt":"`+token+`"}}}`); err != nil {
		t.Errorf("setting the request annotations as claimwarden: %v, want allowed", err)
	}
	for _, body := range []string{
		`{"spec":{"suspend":false}}`,
		`{"metadata":{"labels":{"team":"x"}}}`,
		`{"metadata":{"annotations":{"other":"x"}}}`,
		`{"metadata":{"annotations":{"reconcile.fluxcd.io/resetAt":"2026-12-02T00:00:00Z","other":"x"}}}`,
		`{"metadata":{"finalizers":["example.com/hold"]}}`,
	} {
		if err := patch(sa, body); !refused(err) {
			t.Errorf("patch %s as claimwarden: %v, want refused by the admission policy", body, err)
		}
	}
	var got helmv2.HelmRelease
	if err := cl.admin.Get(ctx, key, &got); err != nil {
		t.Fatal(err)
	}
	if got.Annotations["other"] != "" || got.Labels["team"] != "" || !got.Spec.Suspend || got.Annotations["reconcile.fluxcd.io/forceAt"] != token {
		t.Errorf("annotations %v, labels %v, suspend %v: want only the request annotations changed", got.Annotations, got.Labels, got.Spec.Suspend)
	}
}
