package rollout_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/storagesim"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// spokeName is the spoke's ClusterName in TestSpokeRolloutConvergesOnTheSpoke.
const spokeName = "spoke"

// Issue 41: a rollout built on a spoke's cluster.Cluster, run by a hub's
// manager, converges a proposal for a StatefulSet on the spoke there
// (claims grown, the StatefulSet re-created, its VolumeClaimRollout and
// events on the spoke, none on the hub), while the journal key Secret is
// made on the hub and never on the spoke.
func TestSpokeRolloutConvergesOnTheSpoke(t *testing.T) {
	hub := started(t)
	spokeEnv := testenv.StartT(t, testenv.Options{Kwok: true, CRDDirs: []string{filepath.Join("..", "..", "config", "crd", "bases")}})
	spoke := testenv.Client(t, spokeEnv.Config, v1alpha1.AddToScheme)
	ctx := context.Background()
	if err := spoke.Create(ctx, storagesim.StorageClass(classExpandable, true)); err != nil {
		t.Fatal(err)
	}
	// The spoke's storage driver runs on the spoke, as a CSI driver would.
	testenv.RunT(t, manager.RunnableFunc(func(ctx context.Context) error {
		return (&storagesim.Simulator{Delay: simDelay}).Start(ctx, spokeEnv.Config)
	}))
	// Every namespace on both clusters, so that a write to the wrong one
	// would succeed and be seen.
	ns, keyNS := namespace(t, spoke), namespace(t, hub)
	if err := fixtures.Namespace(ctx, hub, ns); err != nil {
		t.Fatal(err)
	}
	if err := fixtures.Namespace(ctx, spoke, keyNS); err != nil {
		t.Fatal(err)
	}
	journalKey := types.NamespacedName{Namespace: keyNS, Name: "claimwarden-journal-key"}
	reconciles := counter(t, "controller_runtime_reconcile_total", "controller", "volumeclaimrollout-"+spokeName)
	convergences := counter(t, "claimwarden_convergences_total", "cluster", spokeName)
	proposals := proposal.NewStore()
	runSpokeRollout(t, spokeEnv, journalKey, proposals)

	sts := fixtures.StatefulSet(ns, "db", 2, classExpandable, "1Gi")
	live, key := createLive(t, spoke, sts)
	desired := live.DeepCopy()
	fixtures.SetTemplateSize("1536Mi")(desired)
	proposals.Set(ctx, proposal.Proposal{
		StatefulSet: desired,
		Source: v1alpha1.Source{
			Kind: "Kustomization", Namespace: "flux-system", Name: "apps",
			Repository: "https://git.example.com/org/apps.git", Revision: "main@sha1:" + strings.Repeat("5", 40),
		},
	})

	waitRollout(t, spoke, key, "Ready at 1536Mi on the spoke", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Compatible == 2 && v.Status.Claims[0].To == "1536Mi"
	})
	for _, name := range []string{"data-db-0", "data-db-1"} {
		pvc := claim(t, spoke, ns, name)
		if req, capa := request(pvc), capacity(pvc); req.String() != "1536Mi" || capa.String() != "1536Mi" {
			t.Errorf("claim %s on the spoke requests %s with capacity %s, want 1536Mi", name, req.String(), capa.String())
		}
	}
	var now appsv1.StatefulSet
	if err := spoke.Get(ctx, key, &now); err != nil {
		t.Fatal(err)
	}
	if now.UID == live.UID {
		t.Error("the StatefulSet on the spoke was not re-created")
	}
	if got := now.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]; got.String() != "1536Mi" {
		t.Errorf("the spoke's template requests %s, want 1536Mi", got.String())
	}
	if n := len(events(t, spoke, ns, v1alpha1.ReasonConverged)); n != 1 {
		t.Errorf("%d %s events on the spoke, want 1", n, v1alpha1.ReasonConverged)
	}
	if n := len(events(t, hub, ns, v1alpha1.ReasonConverged)); n != 0 {
		t.Errorf("%d %s events on the hub, want none", n, v1alpha1.ReasonConverged)
	}
	if err := hub.Get(ctx, key, &v1alpha1.VolumeClaimRollout{}); !apierrors.IsNotFound(err) {
		t.Errorf("reading VolumeClaimRollout %s on the hub: %v, want not found", key, err)
	}

	var secret corev1.Secret
	if err := hub.Get(ctx, journalKey, &secret); err != nil {
		t.Errorf("the journal key Secret %s on the hub: %v", journalKey, err)
	}
	if err := spoke.Get(ctx, journalKey, &secret); !apierrors.IsNotFound(err) {
		t.Errorf("reading the journal key Secret %s on the spoke: %v, want not found", journalKey, err)
	}

	if n := counter(t, "controller_runtime_reconcile_total", "controller", "volumeclaimrollout-"+spokeName); n == reconciles {
		t.Error("no reconcile counted for controller volumeclaimrollout-" + spokeName)
	}
	if n := counter(t, "claimwarden_convergences_total", "cluster", spokeName); n != convergences+1 {
		t.Errorf("claimwarden_convergences_total{cluster=%q} went from %v to %v, want one more", spokeName, convergences, n)
	}
}

// runSpokeRollout runs, until the test ends, a hub manager (on the shared
// control plane) whose rollout controller is built on a cluster.Cluster
// of spokeEnv, as claimwarden on a hub runs one per spoke.
func runSpokeRollout(t *testing.T, spokeEnv *testenv.Env, journalKey types.NamespacedName, proposals *proposal.Store) {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 k8s.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Controller names are process-wide: -count=2 builds the spoke's again.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := cluster.New(spokeEnv.Config, func(o *cluster.Options) {
		o.Scheme = k8s.Scheme()
		o.Cache.DefaultTransform = cache.TransformStripManagedFields()
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(cl); err != nil {
		t.Fatal(err)
	}
	if _, err := rollout.SetupWithCluster(mgr, cl, rollout.Options{
		ClusterName:          spokeName,
		MaxConcurrentPatches: 1,
		RetryBaseDelay:       time.Second,
		RetryMaxDelay:        5 * time.Second,
		Policies:             engine,
		Proposals:            proposals,
		JournalKeySecret:     journalKey,
	}); err != nil {
		t.Fatal(err)
	}
	testenv.RunT(t, mgr)
}
