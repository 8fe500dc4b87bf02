package helm

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RequestUpgrade asks helm-controller to release a HelmRelease again now, the
// way `flux reconcile helmrelease --reset --force` does: one token in
// reconcile.fluxcd.io/requestedAt (reconcile now), resetAt (forget the failed
// attempts, so that exhausted retries or a remediation do not stop the
// upgrade) and forceAt (upgrade even where helm-controller sees nothing
// changed or no retry left). helm-controller acts on resetAt and forceAt only
// when they equal requestedAt.
func RequestUpgrade(ctx context.Context, c client.Client, key types.NamespacedName, fieldOwner string) error {
	token := time.Now().UTC().Format(time.RFC3339Nano)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		meta.ReconcileRequestAnnotation: token,
		helmv2.ResetRequestAnnotation:   token,
		helmv2.ForceRequestAnnotation:   token,
	}}})
	if err != nil {
		return err
	}
	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := c.Patch(ctx, hr, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(fieldOwner)); err != nil {
		return fmt.Errorf("requesting an upgrade of HelmRelease %s: %w", key, err)
	}
	return nil
}
