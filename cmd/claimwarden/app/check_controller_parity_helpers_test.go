package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/storagesim"
	"github.com/claimwarden/claimwarden/test/testenv"
)

const (
	// parityClass serves every case's claims; parityOtherClass is the one
	// the class case proposes. Both expand.
	parityClass      = "sim"
	parityOtherClass = "sim-other"
	// prepRevision proposes what brings a case to its base state.
	prepRevision = "main@sha1:0b1e2a3c4d5e6f708192a3b4c5d6e7f801234567"
	// parityTimeout bounds each wait of the parity test.
	parityTimeout = 2 * time.Minute
)

// parity is the cluster the parity cases share: one control plane, the
// rollout controller and the Store it takes proposals from.
type parity struct {
	env       *testenv.Env
	c         client.Client
	proposals *proposal.Store
}

// parityBase is what a case's base state was before any proposal.
type parityBase struct {
	uid types.UID
	// requests are the claims' storage requests, by name.
	requests map[string]string
}

func startParity(t *testing.T) *parity {
	t.Helper()
	env := testenv.StartT(t, testenv.Options{Kwok: true, CRDDirs: []string{filepath.Join("..", "..", "..", "config", "crd", "bases")}})
	c, proposals := startController(t, env)
	ctx := context.Background()
	if err := fixtures.Namespace(ctx, c, "claimwarden-system"); err != nil {
		t.Fatal(err)
	}
	for _, class := range []string{parityClass, parityOtherClass} {
		if err := c.Create(ctx, storagesim.StorageClass(class, true)); err != nil {
			t.Fatal(err)
		}
	}
	return &parity{env: env, c: c, proposals: proposals}
}

// key is the case's StatefulSet, in a namespace of its own.
func (p *parity) key(tc parityCase) types.NamespacedName {
	return types.NamespacedName{Namespace: "parity-" + tc.name, Name: tc.name}
}

// base is the case's StatefulSet as first created.
func (p *parity) base(tc parityCase) *appsv1.StatefulSet {
	key := p.key(tc)
	sts := fixtures.StatefulSet(key.Namespace, key.Name, cmpOr(tc.replicas, 2), parityClass, cmpOr(tc.size, "10Gi"))
	if tc.shape != nil {
		tc.shape(sts)
	}
	return sts
}

// desired is the StatefulSet the case proposes: its base, changed.
func (p *parity) desired(tc parityCase) *appsv1.StatefulSet {
	d := p.base(tc)
	tc.propose(d)
	d.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}
	return d
}

func (p *parity) desiredYAML(t *testing.T, tc parityCase) []byte {
	t.Helper()
	b, err := yaml.Marshal(p.desired(tc))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// propose hands the case's proposal at revision to the controller.
func (p *parity) propose(tc parityCase, revision string) {
	p.proposals.Set(context.Background(), proposal.Proposal{StatefulSet: p.desired(tc), Source: paritySource(revision)})
}

func paritySource(revision string) v1alpha1.Source {
	return v1alpha1.Source{
		Kind: "Kustomization", Namespace: "flux-system", Name: "shop",
		Repository: "https://git.example.com/org/shop.git", Revision: revision,
	}
}

// baseStates creates every case's StatefulSet, waits until they and their
// rollouts are Ready, brings each to its base state (concurrently: some
// wait for a rollout of their own) and records what that state is.
func (p *parity) baseStates(t *testing.T, cases []parityCase) []parityBase {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), parityTimeout)
	defer cancel()
	for _, tc := range cases {
		if err := fixtures.Namespace(ctx, p.c, p.key(tc).Namespace); err != nil {
			t.Fatal(err)
		}
		if err := p.c.Create(ctx, p.base(tc)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range cases {
		key := p.key(tc)
		if err := fixtures.WaitReady(ctx, p.c, key, parityTimeout); err != nil {
			t.Fatal(err)
		}
		waitFor(t, p.c, key, "Ready before any proposal", func(v *v1alpha1.VolumeClaimRollout) bool { return conditions.IsReady(v) })
	}
	errs := make([]error, len(cases))
	var wg sync.WaitGroup
	for i, tc := range cases {
		if tc.prepare == nil {
			continue
		}
		wg.Go(func() {
			if err := tc.prepare(ctx, p, p.key(tc)); err != nil {
				errs[i] = fmt.Errorf("case %s: %w", tc.name, err)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	bases := make([]parityBase, len(cases))
	for i, tc := range cases {
		bases[i] = p.snapshot(t, p.key(tc))
	}
	return bases
}

// snapshot records the StatefulSet's UID and its claims' requests.
func (p *parity) snapshot(t *testing.T, key types.NamespacedName) parityBase {
	t.Helper()
	ctx := context.Background()
	var sts appsv1.StatefulSet
	if err := p.c.Get(ctx, key, &sts); err != nil {
		t.Fatal(err)
	}
	var claims corev1.PersistentVolumeClaimList
	if err := p.c.List(ctx, &claims, client.InNamespace(key.Namespace)); err != nil {
		t.Fatal(err)
	}
	b := parityBase{uid: sts.UID, requests: map[string]string{}}
	for _, c := range claims.Items {
		r := c.Spec.Resources.Requests[corev1.ResourceStorage]
		b.requests[c.Name] = r.String()
	}
	return b
}

// assertActed asserts what the controller did with the proposal: nothing
// at all when denied (no re-create, no claim patched), every claim at the
// wanted size once Ready.
func (p *parity) assertActed(t *testing.T, tc parityCase, base parityBase, vcr *v1alpha1.VolumeClaimRollout) {
	t.Helper()
	now := p.snapshot(t, p.key(tc))
	switch {
	case tc.want.denied():
		if now.uid != base.uid {
			t.Errorf("StatefulSet re-created (UID %s → %s) for a denied proposal", base.uid, now.uid)
		}
		for name, was := range base.requests {
			if now.requests[name] != was {
				t.Errorf("claim %s patched from %s to %s for a denied proposal", name, was, now.requests[name])
			}
		}
	case tc.want.size != "":
		for _, cs := range vcr.Status.Claims {
			if cs.Phase != v1alpha1.ClaimCompatible || cs.To != tc.want.size || now.requests[cs.Name] != tc.want.size {
				t.Errorf("claim %s %s at %s (requests %s), want compatible at %s", cs.Name, cs.Phase, cs.To, now.requests[cs.Name], tc.want.size)
			}
		}
	}
}

func cmpOr[T comparable](v, fallback T) T {
	var zero T
	if v == zero {
		return fallback
	}
	return v
}

// onDelete gives the StatefulSet updateStrategy OnDelete.
func onDelete(sts *appsv1.StatefulSet) {
	sts.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
}

// partition gives the StatefulSet a rolling-update partition.
func partition(n int32) func(*appsv1.StatefulSet) {
	return func(sts *appsv1.StatefulSet) {
		sts.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{
			Type:          appsv1.RollingUpdateStatefulSetStrategyType,
			RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To(n)},
		}
	}
}

// storageQuota puts a ResourceQuota of requests.storage hard in the
// namespace and waits until kube-controller-manager counted the claims:
// until then policies would see nothing used.
func storageQuota(hard string) func(context.Context, *parity, types.NamespacedName) error {
	return func(ctx context.Context, p *parity, key types.NamespacedName) error {
		var claims corev1.PersistentVolumeClaimList
		if err := p.c.List(ctx, &claims, client.InNamespace(key.Namespace)); err != nil {
			return err
		}
		var used resource.Quantity
		for _, c := range claims.Items {
			used.Add(c.Spec.Resources.Requests[corev1.ResourceStorage])
		}
		q := &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: "storage"},
			Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsStorage: resource.MustParse(hard)}},
		}
		if err := p.c.Create(ctx, q); err != nil {
			return err
		}
		err := wait.PollUntilContextTimeout(ctx, fixtures.Poll, parityTimeout, true, func(ctx context.Context) (bool, error) {
			if err := p.c.Get(ctx, client.ObjectKeyFromObject(q), q); err != nil {
				return false, err
			}
			u, ok := q.Status.Used[corev1.ResourceRequestsStorage]
			return ok && u.Cmp(used) == 0, nil
		})
		if err != nil {
			return fmt.Errorf("ResourceQuota %s/%s: used %v, want requests.storage %s: %w", q.Namespace, q.Name, q.Status.Used, used.String(), err)
		}
		return nil
	}
}

// failedExpansion proposes the template at size to the controller while
// the storage fails that expansion of the highest claim: the rollout
// re-creates the StatefulSet, patches that claim, and stops with it
// Failed and the others untouched, the state a recovery starts from.
func failedExpansion(size string) func(context.Context, *parity, types.NamespacedName) error {
	return func(ctx context.Context, p *parity, key types.NamespacedName) error {
		var sts appsv1.StatefulSet
		if err := p.c.Get(ctx, key, &sts); err != nil {
			return err
		}
		failing := fmt.Sprintf("data-%s-%d", key.Name, ptr.Deref(sts.Spec.Replicas, 1)-1)
		if err := annotateClaims(ctx, p.c, key.Namespace, storagesim.FailResizeAnnotation, "simulated: the pool has no room for "+size, failing); err != nil {
			return err
		}
		// As a source renders it: no server-side fields.
		desired := &appsv1.StatefulSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
			ObjectMeta: metav1.ObjectMeta{Namespace: sts.Namespace, Name: sts.Name, Labels: sts.Labels, Annotations: sts.Annotations},
			Spec:       *sts.Spec.DeepCopy(),
		}
		growTo(size)(desired)
		p.proposals.Set(ctx, proposal.Proposal{StatefulSet: desired, Source: paritySource(prepRevision)})
		vcr, err := pollRollout(ctx, p.c, key, func(v *v1alpha1.VolumeClaimRollout) bool {
			stalled := conditions.Get(v, meta.StalledCondition)
			return v.Status.Proposal != nil && v.Status.Proposal.Source.Revision == prepRevision &&
				stalled != nil && stalled.Reason == v1alpha1.ReasonResizeFailed && claimStatusOf(v, failing).Phase == v1alpha1.ClaimFailed
		})
		if err != nil {
			return fmt.Errorf("the expansion to %s never failed: %w: %s", size, err, describeRollout(vcr))
		}
		return nil
	}
}

// offlineStorage makes every claim's expansions offline: the file system
// grows only once another Pod mounts the volume (storagesim).
func offlineStorage(ctx context.Context, p *parity, key types.NamespacedName) error {
	var claims corev1.PersistentVolumeClaimList
	if err := p.c.List(ctx, &claims, client.InNamespace(key.Namespace)); err != nil {
		return err
	}
	names := make([]string, 0, len(claims.Items))
	for _, c := range claims.Items {
		names = append(names, c.Name)
	}
	return annotateClaims(ctx, p.c, key.Namespace, storagesim.OfflineResizeAnnotation, "true", names...)
}

func annotateClaims(ctx context.Context, c client.Client, namespace, key, value string, names ...string) error {
	for _, name := range names {
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, key, value)
		if err := c.Patch(ctx, pvc, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			return err
		}
	}
	return nil
}

// startController runs the rollout controller as claimwarden runs it, with
// the shipped policies, the storage simulator and a Store the test proposes
// into; it stops with the test.
func startController(t *testing.T, env *testenv.Env) (client.Client, *proposal.Store) {
	t.Helper()
	logs, err := os.Create(filepath.Join(env.Dir, "controller.log"))
	if err != nil {
		t.Fatal(err)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs), zap.UseDevMode(true)))
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Controller names are process-wide: -count=2 registers them again.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	engine, err := policies.New(ctx, policies.Options{PollInterval: -1, Logger: ctrl.Log.WithName("policies")})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := (&storagesim.Simulator{Delay: 200 * time.Millisecond}).SetupWithManager(mgr); err != nil {
		cancel()
		t.Fatal(err)
	}
	proposals := proposal.NewStore()
	if _, err := rollout.SetupWithManager(mgr, rollout.Options{
		Policies:         engine,
		Proposals:        proposals,
		JournalKeySecret: types.NamespacedName{Namespace: "claimwarden-system", Name: "claimwarden-journal-key"},
	}); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
		_ = logs.Close()
	})
	return c, proposals
}

// waitFor polls the VolumeClaimRollout until ok holds, and returns it.
func waitFor(t *testing.T, c client.Client, key types.NamespacedName, what string, ok func(*v1alpha1.VolumeClaimRollout) bool) *v1alpha1.VolumeClaimRollout {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), parityTimeout)
	defer cancel()
	vcr, err := pollRollout(ctx, c, key, ok)
	if err != nil {
		t.Fatalf("VolumeClaimRollout %s never %s: %s", key, what, describeRollout(vcr))
	}
	return vcr
}

// pollRollout polls the VolumeClaimRollout until ok holds or ctx ends (at
// most parityTimeout), and returns it as last read.
func pollRollout(ctx context.Context, c client.Client, key types.NamespacedName, ok func(*v1alpha1.VolumeClaimRollout) bool) (*v1alpha1.VolumeClaimRollout, error) {
	vcr := &v1alpha1.VolumeClaimRollout{}
	err := wait.PollUntilContextTimeout(ctx, fixtures.Poll, parityTimeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, vcr); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return ok(vcr), nil
	})
	return vcr, err
}

func describeRollout(v *v1alpha1.VolumeClaimRollout) string {
	var b strings.Builder
	fmt.Fprintf(&b, "problems=%q", v.Status.Problems)
	for _, c := range v.Status.Conditions {
		fmt.Fprintf(&b, "\n  %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	for _, c := range v.Status.Claims {
		fmt.Fprintf(&b, "\n  claim %s %s→%s %s %s", c.Name, c.From, c.To, c.Phase, c.Message)
	}
	return b.String()
}
