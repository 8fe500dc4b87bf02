package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/controllerproc"
	"github.com/claimwarden/claimwarden/test/fluxenv"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// coreAccount is a second ServiceAccount bound to config/rbac alone, as
// config/default installs it with no component: what the core controller
// may do when no optional feature is on.
const coreAccount = "claimwarden-core"

// TestCoreRBACGrantsNoFeature proves that every permission an optional
// feature needs comes with its component only: the core grants no
// StatefulSet write, no Secret, no Flux or Argo CD object and no ConfigMap
// outside its namespace.
func TestCoreRBACGrantsNoFeature(t *testing.T) {
	cl := started(t)
	coreReady(t, cl)
	const ns = "any-namespace"
	checkAccess(t, cl.admin, "system:serviceaccount:"+controllerNamespace+":"+coreAccount, []access{
		// The core: claims compared and patched, StatefulSets read, its own records.
		{"patch", "", "persistentvolumeclaims", "", ns, true},
		{"watch", "apps", "statefulsets", "", "", true},
		{"patch", "claimwarden.dev", "volumeclaimrollouts", "status", ns, true},
		{"update", "coordination.k8s.io", "leases", "", controllerNamespace, true},
		{"watch", "", "configmaps", "", controllerNamespace, true},
		// Convergence only.
		{"create", "apps", "statefulsets", "", ns, false},
		{"update", "apps", "statefulsets", "", ns, false},
		{"delete", "apps", "statefulsets", "", ns, false},
		// Commit statuses and Argo CD only.
		{"get", "", "secrets", "", controllerNamespace, false},
		{"list", "", "secrets", "", controllerNamespace, false},
		// Flux only.
		{"watch", "kustomize.toolkit.fluxcd.io", "kustomizations", "", "", false},
		{"patch", "kustomize.toolkit.fluxcd.io", "kustomizations", "", ns, false},
		{"get", "source.toolkit.fluxcd.io", "gitrepositories", "", ns, false},
		{"get", "", "configmaps", "", ns, false},
		// Argo CD only.
		{"watch", "argoproj.io", "applications", "", "", false},
	})
}

var (
	coreOnce sync.Once
	coreErr  error
)

// coreReady installs config/rbac alone for coreAccount, once.
func coreReady(t *testing.T, cl *cluster) {
	t.Helper()
	coreOnce.Do(func() {
		objs, err := buildRBAC()
		if err != nil {
			coreErr = err
			return
		}
		for _, o := range objs {
			if o.GetKind() == "Namespace" {
				continue // created by setup
			}
			renameForCoreAccount(o)
			if err := cl.admin.Create(context.Background(), o); err != nil {
				coreErr = fmt.Errorf("creating %s %s: %w", o.GetKind(), o.GetName(), err)
				return
			}
		}
	})
	if coreErr != nil {
		t.Fatal(coreErr)
	}
}

// renameForCoreAccount gives an object of config/rbac its own name and
// binds it to coreAccount, so it lives beside the e2e's full installation.
func renameForCoreAccount(o *unstructured.Unstructured) {
	o.SetName(o.GetName() + "-core")
	if o.GetKind() == "ServiceAccount" {
		o.SetName(coreAccount)
	}
	if ref, ok := o.Object["roleRef"].(map[string]any); ok {
		ref["name"] = fmt.Sprint(ref["name"]) + "-core"
	}
	if subjects, ok := o.Object["subjects"].([]any); ok {
		for _, s := range subjects {
			s.(map[string]any)["name"] = coreAccount
		}
	}
}

// TestFluxPatchPinnedToRequestedAt proves the admission policy of
// config/components/flux: claimwarden's identity may set
// reconcile.fluxcd.io/requestedAt on a Kustomization and change nothing
// else of it, although RBAC grants it patch.
func TestFluxPatchPinnedToRequestedAt(t *testing.T) {
	cl := started(t)
	startFlux(t) // the Kustomization CRD
	ctx := context.Background()
	ns := namespace(t, cl.admin)
	ks := fluxenv.Kustomization(ns, "pinned", "absent", "./")
	ks.Spec.Suspend = true // nothing for kustomize-controller to do with it
	if err := cl.admin.Create(ctx, ks); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", cl.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	sa, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: "pinned"}
	patch := func(c client.Client, body string) error {
		obj := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}}
		return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(body)))
	}
	refused := func(err error) bool {
		return err != nil && strings.Contains(err.Error(), "claimwarden may only set the reconcile.fluxcd.io/requestedAt annotation")
	}

	// The API server enforces a new policy once it has loaded it: change the
	// spec (a new value each try) until it refuses.
	n := 0
	waitFor(t, "the admission policy to refuse a spec change by claimwarden's ServiceAccount", nil, func(context.Context) (bool, error) {
		n++
		err := patch(sa, fmt.Sprintf(`{"spec":{"interval":"%dm"}}`, n))
		return refused(err), err
	})
	if err := patch(sa, `{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"2026-12-01T00:00:00Z"}}}`); err != nil {
		t.Errorf("setting requestedAt as claimwarden: %v, want allowed", err)
	}
	for _, body := range []string{
		`{"spec":{"suspend":false}}`,
		`{"metadata":{"labels":{"team":"x"}}}`,
		`{"metadata":{"annotations":{"other":"x"}}}`,
		`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"2026-12-02T00:00:00Z","other":"x"}}}`,
		`{"metadata":{"finalizers":["example.com/hold"]}}`,
	} {
		if err := patch(sa, body); !refused(err) {
			t.Errorf("patch %s as claimwarden: %v, want refused by the admission policy", body, err)
		}
	}
	if err := patch(cl.admin, `{"spec":{"suspend":true,"interval":"7m"}}`); err != nil {
		t.Errorf("the same kind of change by another identity: %v, want allowed (the policy matches claimwarden only)", err)
	}
	var got kustomizev1.Kustomization
	if err := cl.admin.Get(ctx, key, &got); err != nil {
		t.Fatal(err)
	}
	if got.Annotations["other"] != "" || got.Labels["team"] != "" || !got.Spec.Suspend {
		t.Errorf("a refused change landed: annotations %v, labels %v, suspend %v", got.Annotations, got.Labels, got.Spec.Suspend)
	}
}

// TestMissingComponentStopsStart runs the binary as the core-only account
// with the Flux integration on: it must exit at once naming what it lacks and
// the components that grant it, not start and fail request by request.
func TestMissingComponentStopsStart(t *testing.T) {
	cl := started(t)
	coreReady(t, cl)
	kubeconfig := filepath.Join(env.Dir, "claimwarden-core.kubeconfig")
	if err := writeAccountKubeconfig(context.Background(), kubeconfig, coreAccount); err != nil {
		t.Fatal(err)
	}
	p, err := controllerproc.Start(controllerproc.Options{
		Name: "controller core-only", Binary: cl.binary, Kubeconfig: kubeconfig,
		Log: filepath.Join(env.Dir, t.Name()+".log"), LogFormat: "json",
		ExtraArgs: []string{"--flux"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Terminate(5 * time.Second) })
	waitFor(t, "the controller to exit", nil, func(context.Context) (bool, error) {
		return p.Exited() != nil, nil
	})
	log := testenv.TailFile(p.LogPath(), 20)
	for _, want := range []string{"config/components/convergence", "config/components/flux", "patch kustomizations.kustomize.toolkit.fluxcd.io"} {
		if !strings.Contains(log, want) {
			t.Errorf("the controller's exit does not name %q; log:\n%s", want, log)
		}
	}
}
