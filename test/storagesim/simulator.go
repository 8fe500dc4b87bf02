package storagesim

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

const (
	// DefaultProvisioner is the CSI driver name the simulator answers to.
	DefaultProvisioner = "storagesim.claimwarden.dev"
	// DefaultDelay is how long a simulated resize or modification takes.
	DefaultDelay = 2 * time.Second
	// FailResizeAnnotation on a PVC makes its resizes fail with the value as message.
	FailResizeAnnotation = "storagesim.claimwarden.dev/fail-resize"
	// OfflineResizeAnnotation on a PVC (any value) makes its expansions
	// offline: the volume grows, the claim reports NodeResizePending and
	// FileSystemResizePending, and its capacity grows only once a new Pod
	// mounts it (a Pod using the claim other than the one running at the
	// expansion). The value OfflineResizeNever plays a driver that never
	// grows the file system, not even on remount.
	OfflineResizeAnnotation = "storagesim.claimwarden.dev/offline-resize"
	OfflineResizeNever      = "never"
	// FailModifyAnnotation on a PVC makes its VolumeAttributesClass changes
	// fail as Infeasible with the value as message.
	FailModifyAnnotation = "storagesim.claimwarden.dev/fail-modify"

	// Well-known annotations of the real provisioning protocol.
	annStorageProvisioner = "volume.kubernetes.io/storage-provisioner"
	annSelectedNode       = "volume.kubernetes.io/selected-node"
	annProvisionedBy      = "pv.kubernetes.io/provisioned-by"
)

// Simulator plays the CSI external-provisioner, external-resizer and kubelet
// for claims whose StorageClass names Provisioner. See the package doc.
type Simulator struct {
	// Client reads (cached) and writes objects; SetupWithManager defaults it
	// to the manager's client.
	Client client.Client
	// APIReader reads uncached objects before status writes, so retries on
	// conflict see the newest version; defaults to the manager's API reader.
	APIReader client.Reader
	// Provisioner is the StorageClass provisioner and CSI driver name served;
	// empty means DefaultProvisioner.
	Provisioner string
	// Delay is the simulated storage speed: how long each resize or
	// VolumeAttributesClass change takes. Zero means DefaultDelay, a negative
	// value means no delay.
	Delay time.Duration
	// Workers is how many claims (and volumes) are worked on at once, like
	// the external-resizer's --workers; zero means 4. A scale run sets more,
	// so that its storage is not the bottleneck it measures.
	Workers int

	mu       sync.Mutex
	failures map[types.NamespacedName]string
	// modifyFailures are the injected VolumeAttributesClass change failures.
	modifyFailures map[types.NamespacedName]string
	resizes        map[types.NamespacedName]*attempt
	modifies       map[types.NamespacedName]*attempt
	// usage is when each claim's usage annotations were first seen.
	usage map[types.NamespacedName]usageMark
	// wake re-queues a claim whose injected failure was cleared in memory
	// (no API event would tell the controller).
	wake     chan event.GenericEvent
	recorder events.EventRecorder
	now      func() time.Time
}

// attempt is one simulated operation in flight (or failed) on one claim.
type attempt struct {
	uid    types.UID
	target string // storage quantity or VolumeAttributesClass name
	start  time.Time
	failed string // non-empty once the attempt failed with this message
	// recovers is the target of the failed resize this one replaces with a
	// smaller request: a recovery, which succeeds (resizes only).
	recovers string
}

// init fills defaults; safe to call more than once.
func (s *Simulator) init() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Provisioner == "" {
		s.Provisioner = DefaultProvisioner
	}
	if s.Delay == 0 {
		s.Delay = DefaultDelay
	}
	if s.Delay < 0 {
		s.Delay = 0
	}
	if s.failures == nil {
		s.failures = map[types.NamespacedName]string{}
	}
	if s.modifyFailures == nil {
		s.modifyFailures = map[types.NamespacedName]string{}
	}
	if s.resizes == nil {
		s.resizes = map[types.NamespacedName]*attempt{}
	}
	if s.modifies == nil {
		s.modifies = map[types.NamespacedName]*attempt{}
	}
	if s.usage == nil {
		s.usage = map[types.NamespacedName]usageMark{}
	}
	if s.wake == nil {
		// Buffered so FailResize/ClearFailure never block, even before Start.
		s.wake = make(chan event.GenericEvent, 256)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.recorder == nil {
		s.recorder = &events.FakeRecorder{} // drops events until a manager provides a recorder
	}
}

// Start runs the simulator in its own manager until ctx ends (for the demo
// and for tests that do not run a manager of their own).
func (s *Simulator) Start(ctx context.Context, cfg *rest.Config) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
	})
	if err != nil {
		return fmt.Errorf("storagesim: manager: %w", err)
	}
	if err := s.SetupWithManager(mgr); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// StorageClass returns a StorageClass served by DefaultProvisioner with
// immediate binding and reclaim policy Delete.
func StorageClass(name string, allowExpansion bool) *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta:           metav1.ObjectMeta{Name: name},
		Provisioner:          DefaultProvisioner,
		AllowVolumeExpansion: ptr.To(allowExpansion),
		ReclaimPolicy:        ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode:    ptr.To(storagev1.VolumeBindingImmediate),
	}
}
