package rollout

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/serverinfo"
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
		served, err := serverinfo.VolumeAttributesClasses(s.config)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "reading whether the API server serves VolumeAttributesClasses; going on with what was known")
		} else {
			s.vac = &served
		}
	}
	if s.client != nil && now.Sub(s.recAt) >= serverSupportRecheck {
		if pvc := serverinfo.RecoveryCandidate(pvcs); pvc != nil {
			s.recAt = now
			accepted, err := serverinfo.AcceptsLoweredRequest(ctx, s.client, pvc)
			if err != nil {
				ctrl.LoggerFrom(ctx).Info("could not tell whether the API server accepts a lowered claim request", "error", err.Error())
			} else {
				s.recovery = &accepted
			}
		}
	}
	return policies.Server{VolumeAttributesClasses: s.vac, RecoverFromFailedExpansion: s.recovery}
}
