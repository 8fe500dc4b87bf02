package rollout

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/policies"
)

// What claimwarden depends on differs between Kubernetes releases; it is
// read from the server (discovery, a dry run) rather than from its version,
// since gates can be turned on or off on any release.

// serverSupportRecheck is how long an answer stands: a server upgraded
// under a running controller is seen within it, and a failed read is tried
// again no sooner (every reconcile asks, so a failing endpoint must not
// cost each one a round trip).
const serverSupportRecheck = 10 * time.Minute

// serverSupport is what the API server supports of what a claim change
// needs (policies.Server).
type serverSupport struct {
	config *rest.Config
	// client makes the dry runs; nothing it sends is persisted.
	client client.Client

	mu       sync.Mutex
	vac      *bool
	vacAt    time.Time
	recovery *bool
	recAt    time.Time
}

// of is what the server supports, as far as known, for a StatefulSet
// whose claims are pvcs: whether a failed expansion can be recovered is
// asked (by a dry run on one of them) only where one of them could be.
func (s *serverSupport) of(ctx context.Context, pvcs []corev1.PersistentVolumeClaim) policies.Server {
	if s == nil {
		return policies.Server{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if s.config != nil && now.Sub(s.vacAt) >= serverSupportRecheck {
		s.vacAt = now
		served, err := servesVolumeAttributesClasses(s.config)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "reading whether the API server serves VolumeAttributesClasses; going on as if it did")
		}
		s.vac = served
	}
	if s.client != nil && now.Sub(s.recAt) >= serverSupportRecheck {
		if pvc := recoveryCandidate(pvcs); pvc != nil {
			s.recAt = now
			s.recovery = acceptsLoweredRequest(ctx, s.client, pvc)
		}
	}
	return policies.Server{VolumeAttributesClasses: s.vac, RecoverFromFailedExpansion: s.recovery}
}

// servesVolumeAttributesClasses reads from discovery whether any version of
// storage.k8s.io serves volumeattributesclasses; nil with the error when
// discovery could not tell.
func servesVolumeAttributesClasses(config *rest.Config) (*bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, err
	}
	for _, version := range []string{"v1", "v1beta1", "v1alpha1"} {
		list, err := dc.ServerResourcesForGroupVersion("storage.k8s.io/" + version)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("discovering storage.k8s.io/%s: %w", version, err)
		}
		for _, r := range list.APIResources {
			if r.Name == "volumeattributesclasses" {
				served := true
				return &served, nil
			}
		}
	}
	served := false
	return &served, nil
}

// recoveryCandidate is a claim whose request is above its reported
// capacity (an expansion not finished, or failed), nil when none is: only
// there can a request be lowered, and so asked about.
func recoveryCandidate(pvcs []corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
	for i := range pvcs {
		req := pvcs[i].Spec.Resources.Requests[corev1.ResourceStorage]
		capacity, ok := pvcs[i].Status.Capacity[corev1.ResourceStorage]
		if ok && !capacity.IsZero() && req.Value() > capacity.Value()+1 {
			return &pvcs[i]
		}
	}
	return nil
}

// Where recovery from a failed expansion is off (RecoverVolumeExpansionFailure,
// on by default from 1.32) the API server refuses any lower request with
// this; where it is on, it accepts one above the capacity.
const loweredRequestRefused = "field can not be less than previous value"

// acceptsLoweredRequest asks the API server, in a dry run, to lower pvc's
// request to one byte above its capacity: true when it accepts, false when
// it refuses every lower request, nil when the answer says neither.
func acceptsLoweredRequest(ctx context.Context, c client.Client, pvc *corev1.PersistentVolumeClaim) *bool {
	capacity := pvc.Status.Capacity[corev1.ResourceStorage]
	lower := *resource.NewQuantity(capacity.Value()+1, resource.BinarySI)
	patch := fmt.Sprintf(`{"spec":{"resources":{"requests":{"storage":%q}}}}`, lower.String())
	err := c.Patch(ctx, pvc.DeepCopy(), client.RawPatch("application/merge-patch+json", []byte(patch)), client.DryRunAll)
	var accepted bool
	switch {
	case err == nil:
		accepted = true
	case apierrors.IsInvalid(err) && strings.Contains(err.Error(), loweredRequestRefused):
		accepted = false
	default:
		ctrl.LoggerFrom(ctx).Info("could not tell whether the API server accepts a lowered claim request", "pvc", pvc.Name, "error", err.Error())
		return nil
	}
	return &accepted
}
