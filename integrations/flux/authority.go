package flux

import (
	"context"
	"fmt"
	"slices"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/reconciler/authority"
)

// Authority implements source.Tool: kustomize-controller applies a
// Kustomization as its spec.serviceAccountName, or, locked down with
// --default-service-account, as that account of the Kustomization's
// namespace; otherwise as itself (nil).
func (k *Kustomizations) Authority(ctx context.Context, obj client.Object) (*v1alpha1.Identity, error) {
	ks := obj.(*kustomizev1.Kustomization)
	if sa := authority.ServiceAccountOr(ks.Namespace, ks.Spec.ServiceAccountName, k.DefaultServiceAccount); sa != nil || ks.Spec.KubeConfig == nil {
		// With a kubeConfig too: Flux impersonates the account of that
		// name on the remote cluster (fluxcd/pkg runtime/client).
		return sa, nil
	}
	// Flux applies as whoever the tenant's kubeconfig authenticates as.
	remote, err := k.remote(ctx, ks)
	if err != nil {
		return nil, err
	}
	return remote.Identity(ctx)
}

// Manages implements source.Tool: a Kustomization manages the StatefulSets
// its inventory records (kustomize-controller writes status.inventory on
// every apply; a failed apply keeps the previous one, which holds the
// StatefulSet whose templates now fail), and with a targetNamespace only
// those of that namespace. The kustomize.toolkit.fluxcd.io labels are not
// asked: whoever edits a StatefulSet can set them.
func (*Kustomizations) Manages(_ context.Context, obj client.Object, live *appsv1.StatefulSet) error {
	return Applies(obj.(*kustomizev1.Kustomization), schema.GroupKind{Group: appsv1.GroupName, Kind: "StatefulSet"}, live.Namespace, live.Name)
}

// Applies says why the Kustomization parent does not apply the object of
// kind gk live, or nil (Applies of its inventory): source.Parent, for
// the HelmReleases a Kustomization applies.
func (*Kustomizations) Applies(_ context.Context, parent client.Object, gk schema.GroupKind, live metav1.Object) error {
	ks := parent.(*kustomizev1.Kustomization)
	if err := thisCluster(ks); err != nil {
		return err
	}
	return Applies(ks, gk, live.GetNamespace(), live.GetName())
}

// thisCluster says why a Kustomization applies nothing of the cluster
// claimwarden runs in, or nil: one with spec.kubeConfig applies to
// another, whatever its inventory names (an object at rest, a child tool
// object, is read in this cluster).
func thisCluster(ks *kustomizev1.Kustomization) error {
	if ks.Spec.KubeConfig != nil {
		return fmt.Errorf("the Kustomization %s/%s applies to another cluster (spec.kubeConfig)", ks.Namespace, ks.Name)
	}
	return nil
}

// Applies says why the Kustomization does not apply the object of kind gk
// named namespace/name, or nil: it does when its inventory records it,
// within its spec.targetNamespace if it has one.
func Applies(ks *kustomizev1.Kustomization, gk schema.GroupKind, namespace, name string) error {
	if t := ks.Spec.TargetNamespace; t != "" && namespace != t {
		return fmt.Errorf("the Kustomization %s/%s applies into namespace %s (spec.targetNamespace)", ks.Namespace, ks.Name, t)
	}
	id := manifests.InventoryID(namespace, name, gk)
	if ks.Status.Inventory == nil || !slices.ContainsFunc(ks.Status.Inventory.Entries, func(e kustomizev1.ResourceRef) bool { return e.ID == id }) {
		return fmt.Errorf("it is not in the inventory of Kustomization %s/%s (status.inventory)", ks.Namespace, ks.Name)
	}
	return nil
}
