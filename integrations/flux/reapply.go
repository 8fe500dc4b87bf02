package flux

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RequestReconcile asks kustomize-controller to reconcile a Kustomization now,
// the way `flux reconcile` does: by setting reconcile.fluxcd.io/requestedAt.
// After a convergence its next apply succeeds instead of waiting for its
// retry interval.
func RequestReconcile(ctx context.Context, c client.Client, key types.NamespacedName, fieldOwner string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		meta.ReconcileRequestAnnotation: time.Now().UTC().Format(time.RFC3339Nano),
	}}})
	if err != nil {
		return err
	}
	ks := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := c.Patch(ctx, ks, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(fieldOwner)); err != nil {
		return fmt.Errorf("requesting a reconcile of Kustomization %s: %w", key, err)
	}
	return nil
}
