package policies

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// PolicyLabel marks a ConfigMap (in the controller's namespace) whose keys
// ending in .rego are policies: claimwarden.dev/policy: "true".
const PolicyLabel = "claimwarden.dev/policy"

// SetConfigMapPolicies sets the policies of one ConfigMap: files maps a
// key to Rego text; an empty map removes the ConfigMap's policies. Modules
// are named "configmap/<namespace>/<name>/<key>". The policy set is
// recompiled at once (and Changes signalled) when the content changed.
func (e *Engine) SetConfigMapPolicies(namespace, name string, files map[string]string) {
	key := namespace + "/" + name
	mods := make([]module, 0, len(files))
	for k, text := range files {
		mods = append(mods, module{name: "configmap/" + key + "/" + k, text: text})
	}
	c := newContribution("configmap/"+key, mods, nil, "")
	e.mu.Lock()
	defer e.mu.Unlock()
	old, had := e.configMaps[key]
	switch {
	case len(files) == 0 && !had:
		return
	case len(files) == 0:
		delete(e.configMaps, key)
	case had && old.digest == c.digest:
		return
	default:
		e.configMaps[key] = c
	}
	e.recompileLocked(context.Background())
}

// SetupConfigMapSource watches ConfigMaps labelled PolicyLabel="true" in
// namespace and keeps SetConfigMapPolicies in step with them (keys ending
// in .rego, *_test.rego excluded). It uses a cache of its own, restricted
// to that namespace and label, so the controller neither caches nor needs
// to list every ConfigMap of the cluster (RBAC: get, list, watch on
// configmaps in namespace). It runs on every replica, not only the leader,
// so a replica taking over has its policies loaded.
func (e *Engine) SetupConfigMapSource(mgr ctrl.Manager, namespace string) error {
	sel := labels.SelectorFromSet(labels.Set{PolicyLabel: "true"})
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:               mgr.GetScheme(),
		Mapper:               mgr.GetRESTMapper(),
		DefaultNamespaces:    map[string]cache.Config{namespace: {}},
		DefaultLabelSelector: sel,
	})
	if err != nil {
		return fmt.Errorf("policy ConfigMap cache: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return err
	}
	e.awaitConfigMaps(namespace)
	if err := mgr.Add(&configMapInitialSync{e: e, cache: c, namespace: namespace}); err != nil {
		return err
	}
	r := &configMapReconciler{e: e, reader: c}
	return ctrl.NewControllerManagedBy(mgr).
		Named("policy-configmaps").
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
		WatchesRawSource(source.Kind(c, &corev1.ConfigMap{}, &handler.TypedEnqueueRequestForObject[*corev1.ConfigMap]{})).
		Complete(r)
}

// awaitConfigMaps makes the engine fail closed until configMapInitialSync
// read the ConfigMaps of namespace: until then the organisation's ConfigMap
// guardrails are unknown, and deciding without them would fail open.
func (e *Engine) awaitConfigMaps(namespace string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.configMaps[pendingConfigMaps] = loadingContribution("configmap", fmt.Sprintf("policy ConfigMaps in namespace %s have not been read yet", namespace))
	e.recompileLocked(context.Background())
}

// configMapReconciler copies one labelled ConfigMap's Rego keys into the engine.
type configMapReconciler struct {
	e      *Engine
	reader client.Reader
}

func (r *configMapReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	err := r.reader.Get(ctx, req.NamespacedName, &cm)
	if apierrors.IsNotFound(err) {
		// Deleted, or no longer labelled (the label-selected cache then
		// reports a delete): its policies go.
		r.e.SetConfigMapPolicies(req.Namespace, req.Name, nil)
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	r.e.SetConfigMapPolicies(req.Namespace, req.Name, regoKeys(cm.Data))
	return ctrl.Result{}, nil
}

// regoKeys keeps the keys that are policies: *.rego but not *_test.rego,
// so that a ConfigMap can carry a README or its tests alongside.
func regoKeys(data map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range data {
		if strings.HasSuffix(k, ".rego") && !isRegoTest(k) {
			out[k] = v
		}
	}
	return out
}

// pendingConfigMaps keys the failure contributed until the first ConfigMap
// list is loaded; it cannot clash with a namespace/name key.
const pendingConfigMaps = "\x00pending"

// configMapInitialSync loads every labelled ConfigMap once the cache has
// synced, then lifts the pending failure.
type configMapInitialSync struct {
	e         *Engine
	cache     cache.Cache
	namespace string
}

// Start implements manager.Runnable.
func (s *configMapInitialSync) Start(ctx context.Context) error {
	// The cache is a runnable like this one and may start after it; a List
	// before then fails with "cache is not started", which is no error.
	if !s.cache.WaitForCacheSync(ctx) {
		return nil // stopping before the first read; nothing was decided without the ConfigMaps
	}
	// Until the API server answers, the pending failure keeps denying: retry
	// (the first List also starts the informer and waits for its sync).
	var list corev1.ConfigMapList
	err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := s.cache.List(ctx, &list, client.InNamespace(s.namespace)); err != nil {
			s.e.log.Error(err, "listing policy ConfigMaps; every claim change is denied until they are read", "namespace", s.namespace)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return nil // stopping before the first read; nothing was decided without the ConfigMaps
	}
	for i := range list.Items {
		s.e.SetConfigMapPolicies(list.Items[i].Namespace, list.Items[i].Name, regoKeys(list.Items[i].Data))
	}
	s.e.mu.Lock()
	delete(s.e.configMaps, pendingConfigMaps)
	s.e.recompileLocked(context.Background())
	s.e.mu.Unlock()
	return nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every
// replica loads its policies, so a replica taking over has them.
func (s *configMapInitialSync) NeedLeaderElection() bool { return false }
