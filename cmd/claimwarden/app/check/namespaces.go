package check

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/claimwarden/claimwarden/integrations/manifests"
)

// namespacing is how the GitOps tool applying the manifests gives them
// their namespaces, which check does before comparing: otherwise a
// StatefulSet written without its namespace would be compared as a new
// one in the default namespace.
type namespacing struct {
	// fallback is the namespace of namespaced objects that name none, as
	// kubectl -n and an Argo CD Application's spec.destination.namespace
	// give it.
	fallback string
	// target, when set, is the namespace of every namespaced object,
	// whatever it names, as a Flux Kustomization's spec.targetNamespace
	// sets it.
	target string
}

// namespaceFrom says where an object's namespace came from.
type namespaceFrom uint8

const (
	// fromManifest: the object names it (or is cluster-scoped).
	fromManifest namespaceFrom = iota
	// fromFallback: the object names none and got --namespace.
	fromFallback
	// fromTarget: --target-namespace set it.
	fromTarget
)

// apply gives o its namespace as the tool will, unless o is of a
// cluster-scoped kind, and says where the namespace came from.
func (n namespacing) apply(o manifests.Object) namespaceFrom {
	if clusterScoped[o.GroupVersionKind().GroupKind()] {
		return fromManifest
	}
	switch {
	case n.target != "":
		o.SetNamespace(n.target)
		return fromTarget
	case o.GetNamespace() == "":
		o.SetNamespace(n.fallback)
		return fromFallback
	}
	return fromManifest
}

// clusterScoped are the kinds Kubernetes defines outside namespaces. Any
// other kind is taken as namespaced, as kustomize and kubectl take kinds
// they do not know.
var clusterScoped = map[schema.GroupKind]bool{
	{Kind: "Namespace"}:                                                               true,
	{Kind: "Node"}:                                                                    true,
	{Kind: "PersistentVolume"}:                                                        true,
	{Kind: "ComponentStatus"}:                                                         true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                   true,
	{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"}:                          true,
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:                                      true,
	{Group: "storage.k8s.io", Kind: "CSINode"}:                                        true,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:                               true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                         true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                  true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:                 true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                             true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                               true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                                      true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                                true,
	{Group: "networking.k8s.io", Kind: "IPAddress"}:                                   true,
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:                                 true,
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}:                 true,
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}:                        true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                       true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}:       true,
	{Group: "resource.k8s.io", Kind: "DeviceClass"}:                                   true,
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}:                                 true,
	{Group: "storagemigration.k8s.io", Kind: "StorageVersionMigration"}:               true,
	{Group: "internal.apiserver.k8s.io", Kind: "StorageVersion"}:                      true,
}

// namespacing is how the options say the tool sets namespaces.
func (o Options) namespacing() namespacing {
	return namespacing{fallback: o.Namespace, target: o.TargetNamespace}
}

// validateNamespaces refuses a namespace option the API server would
// refuse as a namespace name.
func (o Options) validateNamespaces() error {
	for _, f := range []struct{ flag, value string }{{"--namespace", o.Namespace}, {"--target-namespace", o.TargetNamespace}} {
		if f.value == "" {
			continue
		}
		if p := validation.IsDNS1123Label(f.value); len(p) > 0 {
			return fmt.Errorf("%s %s is not a namespace name: %s", f.flag, strconv.Quote(f.value), strings.Join(p, "; "))
		}
	}
	return nil
}
