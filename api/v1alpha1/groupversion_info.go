// Package v1alpha1 contains the claimwarden.dev/v1alpha1 API: the VolumeClaimRollout,
// one per managed StatefulSet, which reports and records the bringing of its
// PersistentVolumeClaims to its volumeClaimTemplates.
// +kubebuilder:object:generate=true
// +groupName=claimwarden.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "claimwarden.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this API with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this API to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
