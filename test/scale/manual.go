package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// manualSize is what the manual procedure grows the claims to, after the
// controller's bump to toSize.
const manualSize = "3Gi"

// manualReport is the same template change done the way users do it today
// without claimwarden, on the same control plane right after the
// controller's bump.
type manualReport struct {
	// Seconds is from the first request until every PVC has manualSize
	// capacity and every StatefulSet has all replicas ready again.
	Seconds float64 `json:"seconds"`
	// Requests are the script's, counted by the same proxy, by "VERB resource".
	Requests      map[string]int64 `json:"requests"`
	RequestsTotal int64            `json:"requestsTotal"`
	PodsRestarted int              `json:"podsRestarted"`
	// CPU is where the machine's CPU went from the first request until done.
	CPU cpuReport `json:"cpu"`
	// Storage is what the storage simulator did meanwhile.
	Storage storageReport `json:"storage"`
	// TimeRatio is the controller's bump time over this one.
	TimeRatio float64 `json:"timeRatio"`
	// RequestRatio compares requests for the same change: the controller's
	// plus the re-apply (orphan delete, wait, create — in the controller's
	// bump the run did that itself, uncounted, so the script's own re-apply
	// requests stand in for it) over the script's.
	RequestRatio float64 `json:"requestRatio"`
}

func (m *manualReport) judge(b *bumpReport) {
	if m.Seconds == 0 || m.RequestsTotal == 0 {
		return
	}
	m.TimeRatio = b.AllReadySeconds / m.Seconds
	var controller int64
	for k, n := range b.Requests.ByVerbResource {
		if !strings.HasPrefix(k, "WATCH ") {
			controller += n
		}
	}
	reapply := m.RequestsTotal - m.Requests["PATCH persistentvolumeclaims"]
	m.RequestRatio = float64(controller+reapply) / float64(m.RequestsTotal)
}

// manual stops the controller (users without claimwarden have none, and its
// reactions would load the API server the script is measured on), then per
// StatefulSet, -workers at a time, does what the runbooks say, as fast as a
// script can: patch every PVC (kubectl patch pvc), orphan-delete the
// StatefulSet and wait until it is gone (kubectl delete --cascade=orphan
// waits by default), create it again with the new size (kubectl apply).
func (r *runner) manual(ctx context.Context) error {
	r.logf("manual procedure: stopping the controller, then patch PVCs + orphan delete + re-create of %d StatefulSets with %s", len(r.keys), manualSize)
	if err := r.stopController(); err != nil {
		return err
	}
	script, err := r.proxyClient()
	if err != nil {
		return err
	}
	pods, err := r.podUIDs(ctx)
	if err != nil {
		return err
	}
	before := r.proxy.snapshot()
	from, err := r.sampleWindow()
	if err != nil {
		return err
	}
	profiled := r.profileManual(ctx)
	began := time.Now()
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"resources":{"requests":{"storage":%q}}}}`, manualSize)))
	if _, err := r.each(ctx, func(ctx context.Context, key client.ObjectKey) error {
		for o := range r.o.replicas {
			pvc := &corev1.PersistentVolumeClaim{}
			pvc.Namespace, pvc.Name = key.Namespace, claimName(key, o)
			if err := script.Patch(ctx, pvc, patch); err != nil {
				return err
			}
		}
		return fixtures.ReplaceTemplates(ctx, script, key, fixtures.SetTemplateSize(manualSize))
	}); err != nil {
		return err
	}
	if err := r.waitManual(ctx); err != nil {
		return err
	}
	m := &r.rep.Manual
	m.Seconds = time.Since(began).Seconds()
	if end, err := r.sampleWindow(); err == nil {
		m.CPU, m.Storage = from.between(end, m.Seconds)
	}
	if err := <-profiled; err != nil {
		return fmt.Errorf("CPU profile of the manual procedure: %w", err)
	}
	after := r.proxy.snapshot()
	m.Requests = map[string]int64{}
	for k, v := range after.arrived {
		if d := v - before.arrived[k]; d > 0 && k.Verb != "WATCH" {
			m.Requests[k.String()] += d
			m.RequestsTotal += d
		}
	}
	if m.PodsRestarted, err = r.podsRestarted(ctx, pods); err != nil {
		return err
	}
	r.logf("manual procedure: done in %.1fs, %d requests, %d Pods restarted", m.Seconds, m.RequestsTotal, m.PodsRestarted)
	return nil
}

// waitManual returns when every claim of the run has manualSize capacity
// and then every StatefulSet of the run has all replicas ready, watching
// (watchUntil) as the controller's bump does. A claim's capacity only grows,
// so the StatefulSets are the last to be looked at; their readiness is
// counted as it is now, not as first seen.
func (r *runner) waitManual(ctx context.Context) error {
	want := resource.MustParse(manualSize)
	nothing := func() error { return nil }
	grown := make(map[client.ObjectKey]bool, len(r.keys)*r.o.replicas)
	seeClaim := func(o runtime.Object) {
		if c, ok := o.(*corev1.PersistentVolumeClaim); ok && r.ours(c.Namespace) {
			if q := c.Status.Capacity[corev1.ResourceStorage]; q.Cmp(want) == 0 {
				grown[client.ObjectKeyFromObject(c)] = true
			}
		}
	}
	claimsDone := func() bool { return len(grown) == len(r.keys)*r.o.replicas }
	if err := r.watchUntil(ctx, &corev1.PersistentVolumeClaimList{}, seeClaim, claimsDone, nothing, notCrowd); err != nil {
		return fmt.Errorf("waiting for the manual procedure's claims: %w", err)
	}
	ready := make(map[client.ObjectKey]bool, len(r.keys))
	seeSet := func(o runtime.Object) {
		if s, ok := o.(*appsv1.StatefulSet); ok && r.ours(s.Namespace) {
			if fixtures.Ready(s) {
				ready[client.ObjectKeyFromObject(s)] = true
			} else {
				delete(ready, client.ObjectKeyFromObject(s))
			}
		}
	}
	setsDone := func() bool { return len(ready) == len(r.keys) }
	if err := r.watchUntil(ctx, &appsv1.StatefulSetList{}, seeSet, setsDone, nothing); err != nil {
		return fmt.Errorf("waiting for the manual procedure's StatefulSets: %w", err)
	}
	return nil
}

// stopController ends the controller with SIGTERM, once; the run's stop
// then leaves it alone.
func (r *runner) stopController() error {
	if r.ctrlStopped {
		return nil
	}
	r.ctrlStopped = true
	return r.ctrl.Shutdown(15 * time.Second)
}

// proxyClient is a client whose requests the proxy counts, as the
// controller's are.
func (r *runner) proxyClient() (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(r.env.Dir, "claimwarden.kubeconfig"))
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 500, 1000
	return client.New(cfg, client.Options{Scheme: r.c.Scheme()})
}

// claimName is the name of the claim of ordinal of sts, whose one template
// (fixtures.StatefulSet) is named "data".
func claimName(sts client.ObjectKey, ordinal int) string {
	return diff.ClaimName("data", sts.Name, int32(ordinal))
}

// claimKeys maps every StatefulSet of the run to its claims' keys.
func (r *runner) claimKeys() map[client.ObjectKey][]client.ObjectKey {
	out := make(map[client.ObjectKey][]client.ObjectKey, len(r.keys))
	for _, key := range r.keys {
		for o := range r.o.replicas {
			out[key] = append(out[key], client.ObjectKey{Namespace: key.Namespace, Name: claimName(key, o)})
		}
	}
	return out
}

// podUIDs are the UIDs of every Pod of the run, by key.
func (r *runner) podUIDs(ctx context.Context) (map[client.ObjectKey]types.UID, error) {
	var pods corev1.PodList
	if err := r.c.List(ctx, &pods, notCrowd); err != nil {
		return nil, err
	}
	out := make(map[client.ObjectKey]types.UID, len(pods.Items))
	for i := range pods.Items {
		if r.ours(pods.Items[i].Namespace) {
			out[client.ObjectKeyFromObject(&pods.Items[i])] = pods.Items[i].UID
		}
	}
	return out, nil
}

// podsRestarted counts the Pods of before that are gone or have another UID.
func (r *runner) podsRestarted(ctx context.Context, before map[client.ObjectKey]types.UID) (int, error) {
	now, err := r.podUIDs(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for k, uid := range before {
		if now[k] != uid {
			n++
		}
	}
	return n, nil
}
