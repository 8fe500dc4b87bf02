// Package v1alpha1 contains the claimwarden.dev/v1alpha1 API: the VolumeClaimRollout,
// one per managed StatefulSet, which reports and records the bringing of its
// PersistentVolumeClaims to its volumeClaimTemplates.
// +kubebuilder:object:generate=true
// +groupName=claimwarden.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "claimwarden.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this API with a scheme. It is
	// apimachinery's, so importing this package pulls in no controller-runtime.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this API to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &VolumeClaimRollout{}, &VolumeClaimRolloutList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
