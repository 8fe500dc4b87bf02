package manifests

import "k8s.io/apimachinery/pkg/runtime/schema"

// InventoryID is the id Flux's inventories (a Kustomization's or a
// HelmRelease's status.inventory) give an object,
// <namespace>_<name>_<group>_<kind>, as Flux writes it with cli-utils'
// object.ObjMetadata. Written here because that package imports
// k8s.io/cli-runtime, which this one format does not justify.
func InventoryID(namespace, name string, gk schema.GroupKind) string {
	return namespace + "_" + name + "_" + gk.Group + "_" + gk.Kind
}
