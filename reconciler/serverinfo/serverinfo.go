// Package serverinfo reads what the API server supports of what a claim
// change needs, from the server itself (discovery, a dry run) rather than
// from its version: a feature gate can be turned on or off on any release.
// The controller and claimwarden check read it alike.
package serverinfo

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// VolumeAttributesClasses reads from discovery whether any version of
// storage.k8s.io serves volumeattributesclasses (GA in 1.34; beta and off
// by default in 1.31–1.33). Where none does, the server drops a claim's
// class from a patch.
func VolumeAttributesClasses(config *rest.Config) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return false, err
	}
	for _, version := range []string{"v1", "v1beta1", "v1alpha1"} {
		list, err := dc.ServerResourcesForGroupVersion("storage.k8s.io/" + version)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("discovering storage.k8s.io/%s: %w", version, err)
		}
		for _, r := range list.APIResources {
			if r.Name == "volumeattributesclasses" {
				return true, nil
			}
		}
	}
	return false, nil
}

// RecoveryCandidate is a claim whose request is above its reported
// capacity by more than a byte (an expansion not finished, or failed), nil
// when none is: only there can a request be lowered, and so asked about.
func RecoveryCandidate(pvcs []corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
	for i := range pvcs {
		req := pvcs[i].Spec.Resources.Requests[corev1.ResourceStorage]
		capacity, ok := pvcs[i].Status.Capacity[corev1.ResourceStorage]
		if ok && !capacity.IsZero() && req.Value() > capacity.Value()+1 {
			return &pvcs[i]
		}
	}
	return nil
}

// loweredRequestRefused is how a server without recovery from failed
// expansion (RecoverVolumeExpansionFailure, on by default from 1.32)
// refuses any lower request; with it, one above the capacity is accepted.
const loweredRequestRefused = "field can not be less than previous value"

// AcceptsLoweredRequest asks the API server, in a dry run that persists
// nothing, to lower pvc's request (a RecoveryCandidate) to one byte above
// its capacity. It returns whether the server accepted, or an error when
// the answer says neither (a conflict, a webhook, no permission).
func AcceptsLoweredRequest(ctx context.Context, c client.Client, pvc *corev1.PersistentVolumeClaim) (bool, error) {
	capacity := pvc.Status.Capacity[corev1.ResourceStorage]
	lower := resource.NewQuantity(capacity.Value()+1, resource.BinarySI)
	patch := fmt.Sprintf(`{"spec":{"resources":{"requests":{"storage":%q}}}}`, lower.String())
	err := c.Patch(ctx, pvc.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(patch)), client.DryRunAll)
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsInvalid(err) && strings.Contains(err.Error(), loweredRequestRefused):
		return false, nil
	}
	return false, fmt.Errorf("asking, in a dry run, whether PersistentVolumeClaim %s/%s may lower its request: %w", pvc.Namespace, pvc.Name, err)
}
