package install

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/controllerproc"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/storagesim"
	"github.com/claimwarden/claimwarden/test/testenv"
)

const class = "simulated"

// installed is a control plane with claimwarden installed on it by a test.
type installed struct {
	env   *testenv.Env
	admin client.Client
}

func newCluster(t *testing.T) *installed {
	t.Helper()
	env := testenv.StartT(t, testenv.Options{Kwok: true})
	admin := testenv.Client(t, env.Config, v1alpha1.AddToScheme, apiextensionsv1.AddToScheme)
	return &installed{env: env, admin: admin}
}

// deployed is what the installed Deployment's Pod gets: the configuration
// file of its ConfigMap and a token of its ServiceAccount.
type deployed struct {
	config string
	sa     *rest.Config
}

func (c *installed) deployed(t *testing.T, configMap, serviceAccount string) deployed {
	t.Helper()
	ctx := context.Background()
	var cm corev1.ConfigMap
	if err := c.admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: configMap}, &cm); err != nil {
		t.Fatalf("the installed ConfigMap: %v", err)
	}
	sa, err := c.env.ServiceAccountConfig(ctx, namespace, serviceAccount)
	if err != nil {
		t.Fatal(err)
	}
	return deployed{config: cm.Data["config.yaml"], sa: sa}
}

// runAsDeployed runs bin/claimwarden as the installed Deployment would: its
// configuration file, a token of its ServiceAccount (so only the RBAC
// installed applies), leader election in its namespace.
func (c *installed) runAsDeployed(t *testing.T, configMap, serviceAccount string) *controllerproc.Process {
	t.Helper()
	ctx := context.Background()
	d := c.deployed(t, configMap, serviceAccount)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(d.config), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := testenv.WriteKubeconfig(kubeconfig, d.sa); err != nil {
		t.Fatal(err)
	}
	bin, err := controllerproc.BinaryPath()
	if err != nil {
		t.Fatal(err)
	}
	p, err := controllerproc.Start(controllerproc.Options{
		Name: "claimwarden as installed", Binary: bin, Kubeconfig: kubeconfig, Log: filepath.Join(dir, "claimwarden.log"),
		LogFormat: "json", Metrics: true, LeaderElectionNamespace: namespace,
		ExtraArgs: []string{"--config", cfg},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("controller log:\n%s", testenv.TailFile(p.LogPath(), 40))
		}
		_ = p.Stop(10 * time.Second)
	})
	if err := p.WaitReady(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	return p
}

// leads waits until the Lease of config.leaderElection.id has a holder.
func (c *installed) leads(t *testing.T) {
	t.Helper()
	var lease coordinationv1.Lease
	err := wait.PollUntilContextTimeout(context.Background(), fixtures.Poll, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "claimwarden.claimwarden.dev"}, &lease); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return ptr.Deref(lease.Spec.HolderIdentity, "") != "", nil
	})
	if err != nil {
		t.Fatalf("the leader Lease %s/claimwarden.claimwarden.dev has no holder: %v", namespace, err)
	}
}

// rollout grows a StatefulSet's template as users do today and waits until
// the controller brought every claim to it.
func (c *installed) rollout(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	if err := c.admin.Create(ctx, storagesim.StorageClass(class, true)); err != nil {
		t.Fatal(err)
	}
	simCtx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	logs, err := os.Create(filepath.Join(t.TempDir(), "storagesim.log"))
	if err != nil {
		t.Fatal(err)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs)))
	sim := &storagesim.Simulator{Delay: -1}
	go func() { _ = sim.Start(simCtx, c.env.Config) }()

	if err := fixtures.Namespace(ctx, c.admin, ns); err != nil {
		t.Fatal(err)
	}
	sts := fixtures.StatefulSet(ns, "db", 2, class, "1Gi")
	if err := c.admin.Create(ctx, sts); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(sts)
	if err := fixtures.WaitReady(ctx, c.admin, key, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := fixtures.ReplaceTemplates(ctx, c.admin, key, fixtures.SetTemplateSize("2Gi")); err != nil {
		t.Fatal(err)
	}
	var vcr v1alpha1.VolumeClaimRollout
	err = wait.PollUntilContextTimeout(ctx, fixtures.Poll, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.admin.Get(ctx, key, &vcr); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return vcr.Status.Counts.Total == 2 && vcr.Status.Counts.Compatible == 2 && vcr.Status.Counts.Capacity == "4Gi", nil
	})
	if err != nil {
		t.Fatalf("the rollout of %s did not complete: counts %+v, conditions %+v", key, vcr.Status.Counts, vcr.Status.Conditions)
	}
}

// serves checks /metrics lists claimwarden's own metrics.
func serves(t *testing.T, metricsAddr string) {
	t.Helper()
	body, err := testenv.HTTPGet(context.Background(), http.DefaultClient, "http://"+metricsAddr+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, "claimwarden_rollout_claims{") {
		t.Error("/metrics has no claimwarden_rollout_claims")
	}
}

func helm(t *testing.T, c *installed, args ...string) string {
	t.Helper()
	return string(run(t, tool(t, "helm"), append(args, "--kubeconfig", c.env.Kubeconfig, "-n", namespace)...))
}

// The chart installed on the control plane: the controller, run with the
// chart's configuration and ServiceAccount, leads, serves /readyz and
// metrics and completes a rollout; helm upgrade rolls it to new values;
// helm uninstall leaves the CRD, the rollouts, StatefulSets and PVCs.
func TestHelmInstallUpgradeUninstall(t *testing.T) {
	c := newCluster(t)
	ctx := context.Background()
	if err := fixtures.Namespace(ctx, c.admin, namespace); err != nil {
		t.Fatal(err)
	}
	helm(t, c, "install", release, chartDir(t), "--set", "image.tag=test", "--wait", "--timeout", "2m")

	p := c.runAsDeployed(t, "claimwarden-config", "claimwarden")
	c.leads(t)
	c.rollout(t, "shop")
	serves(t, p.MetricsAddr)

	before := podTemplateChecksum(t, c)
	helm(t, c, "upgrade", release, chartDir(t), "--set", "image.tag=test", "--set", "config.workers=2", "--wait", "--timeout", "2m")
	var cm corev1.ConfigMap
	if err := c.admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "claimwarden-config"}, &cm); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cm.Data["config.yaml"], "workers: 2") || podTemplateChecksum(t, c) == before {
		t.Errorf("helm upgrade: config.yaml %q, checksum %s before and after", cm.Data["config.yaml"], before)
	}

	helm(t, c, "uninstall", release, "--wait", "--timeout", "2m")
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.admin.Get(ctx, client.ObjectKey{Name: "volumeclaimrollouts.claimwarden.dev"}, &crd); err != nil || !crd.DeletionTimestamp.IsZero() {
		t.Errorf("the CRD after helm uninstall: %v (deleting: %v)", err, crd.DeletionTimestamp)
	}
	key := client.ObjectKey{Namespace: "shop", Name: "db"}
	for _, obj := range []client.Object{&v1alpha1.VolumeClaimRollout{}, &appsv1.StatefulSet{}} {
		if err := c.admin.Get(ctx, key, obj); err != nil {
			t.Errorf("%T shop/db after helm uninstall: %v", obj, err)
		}
	}
	for _, name := range []string{"data-db-0", "data-db-1"} {
		var pvc corev1.PersistentVolumeClaim
		if err := c.admin.Get(ctx, client.ObjectKey{Namespace: "shop", Name: name}, &pvc); err != nil || pvc.Spec.Resources.Requests.Storage().Cmp(resource.MustParse("2Gi")) != 0 {
			t.Errorf("PVC shop/%s after helm uninstall: %v, request %v", name, err, pvc.Spec.Resources.Requests.Storage())
		}
	}
	var deploy appsv1.Deployment
	if err := c.admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "claimwarden"}, &deploy); err == nil {
		t.Error("the Deployment is still there after helm uninstall")
	}
}

func podTemplateChecksum(t *testing.T, c *installed) string {
	t.Helper()
	var d appsv1.Deployment
	if err := c.admin.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: "claimwarden"}, &d); err != nil {
		t.Fatal(err)
	}
	return d.Spec.Template.Annotations["checksum/config"]
}

// config/default (what install.yaml is, before the image is pinned) applied
// server-side: the controller run with its configuration and ServiceAccount
// leads and completes a rollout.
func TestInstallYAMLRunsTheController(t *testing.T) {
	c := newCluster(t)
	manifests := run(t, tool(t, "kubectl"), "kustomize", filepath.Join(repoRoot(t), "config/default"))
	f := filepath.Join(t.TempDir(), "install.yaml")
	if err := os.WriteFile(f, manifests, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, tool(t, "kubectl"), "--kubeconfig", c.env.Kubeconfig, "apply", "--server-side", "-f", f)
	run(t, tool(t, "kubectl"), "--kubeconfig", c.env.Kubeconfig, "wait", "--for", "condition=Established", "crd/volumeclaimrollouts.claimwarden.dev", "--timeout", "60s")
	var cm string
	for _, o := range objects(t, manifests) {
		if o.GetKind() == "ConfigMap" && strings.HasPrefix(o.GetName(), "claimwarden-config") {
			cm = o.GetName() // carries the hash of its content
		}
	}
	p := c.runAsDeployed(t, cm, "claimwarden")
	c.leads(t)
	c.rollout(t, "shop")
	serves(t, p.MetricsAddr)
}
