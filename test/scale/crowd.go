package main

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/fixtures"
)

// The crowd is what a real cluster holds around the StatefulSets, none of it
// claimwarden's (issue 31's big cluster, at -crowd 1): Pods of other
// workloads, bound claims, Secrets of which some are Helm release records in
// the namespaces claimwarden watches for Helm, and ConfigMaps. It is created
// in the run's namespaces before the controller starts, so that the
// controller's first lists meet it, and it does not change afterwards.
var crowdAtOne = crowdCounts{Pods: 50_000, PVCs: 20_000, Secrets: 30_000, Releases: 5_000, ConfigMaps: 10_000}

// crowdLabel marks the crowd, so that the run's own lists leave it out on
// the server side (listing 50,000 Pods on every poll would load the API
// server the run measures).
const crowdLabel = "scale.claimwarden.dev/crowd"

// notCrowd selects everything but the crowd.
var notCrowd = client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(nil).Add(mustRequirement(crowdLabel))}

func mustRequirement(key string) labels.Requirement {
	req, err := labels.NewRequirement(key, "!", nil)
	if err != nil {
		panic(err) // a constant key
	}
	return *req
}

// crowdCounts is how many of each kind the crowd holds; Releases are part
// of Secrets.
type crowdCounts struct {
	Pods, PVCs, Secrets, Releases, ConfigMaps int
}

// crowdOf is the crowd scaled by fraction.
func crowdOf(fraction float64) crowdCounts {
	n := func(v int) int { return int(math.Round(float64(v) * fraction)) }
	return crowdCounts{Pods: n(crowdAtOne.Pods), PVCs: n(crowdAtOne.PVCs), Secrets: n(crowdAtOne.Secrets),
		Releases: n(crowdAtOne.Releases), ConfigMaps: n(crowdAtOne.ConfigMaps)}
}

func (c crowdCounts) String() string {
	return fmt.Sprintf("%d Pods, %d PVCs, %d Secrets (%d Helm release records), %d ConfigMaps",
		c.Pods, c.PVCs, c.Secrets, c.Releases, c.ConfigMaps)
}

// crowdWorkers create the crowd side by side; the run's client allows 500
// requests a second, which a few dozen requests in flight reach.
const crowdWorkers = 48

// createCrowd creates the crowd in the run's namespaces.
func (r *runner) createCrowd(ctx context.Context) error {
	c := crowdOf(r.o.crowd)
	r.rep.Crowd = c
	began := time.Now()
	r.logf("crowd: creating %s in %d namespaces", c, r.o.namespaces)
	if err := r.createNamespaces(ctx); err != nil {
		return err
	}
	ns := func(i int) string { return namespaceName(i % r.o.namespaces) }
	kinds := []struct {
		n    int
		what string
		make func(i int) client.Object
	}{
		{c.PVCs, "claims", func(i int) client.Object { return crowdClaim(ns(i), i) }},
		{c.Pods, "Pods", func(i int) client.Object { return crowdPod(ns(i), i) }},
		{c.Secrets - c.Releases, "Secrets", func(i int) client.Object { return crowdSecret(ns(i), i) }},
		{c.Releases, "Helm release records", func(i int) client.Object { return crowdRelease(ns(i), i) }},
		{c.ConfigMaps, "ConfigMaps", func(i int) client.Object { return crowdConfigMap(ns(i), i) }},
	}
	for _, k := range kinds {
		if err := r.createN(ctx, k.n, k.make); err != nil {
			return fmt.Errorf("crowd: creating %s: %w", k.what, err)
		}
		r.logf("crowd: %d %s created", k.n, k.what)
	}
	r.rep.Setup.CrowdSeconds = time.Since(began).Seconds()
	r.logf("crowd: created in %.0fs", r.rep.Setup.CrowdSeconds)
	return nil
}

// createNamespaces creates the run's namespaces (once: the setup calls it
// again after a crowd).
func (r *runner) createNamespaces(ctx context.Context) error {
	if r.namespacesCreated {
		return nil
	}
	for i := range r.o.namespaces {
		if err := fixtures.Namespace(ctx, r.c, namespaceName(i)); err != nil {
			return err
		}
	}
	r.namespacesCreated = true
	return nil
}

// createN creates make(i) for i in [0, n) on crowdWorkers goroutines; the
// first error stops the rest.
func (r *runner) createN(ctx context.Context, n int, make func(i int) client.Object) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(crowdWorkers, n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				obj := make(i)
				if err := r.c.Create(ctx, obj); err != nil {
					cancel(fmt.Errorf("%T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err))
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

func crowdMeta(ns, name string, i int) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Namespace: ns, Name: name,
		Labels: map[string]string{
			crowdLabel:                    "true",
			"app.kubernetes.io/name":      fmt.Sprintf("app-%d", i/10),
			"app.kubernetes.io/instance":  fmt.Sprintf("app-%d-prod", i/10),
			"app.kubernetes.io/component": "server",
		},
		// What deploy tools and meshes leave on objects: a few hundred
		// bytes that a watch of whole objects would keep.
		Annotations: map[string]string{
			"example.com/config-checksum": strings.Repeat("0f", 32),
			"example.com/owner":           "team-" + fmt.Sprint(i%40) + "@example.com",
			"example.com/description":     strings.Repeat("a workload that is not claimwarden's ", 4),
		},
	}
}

// crowdPod is a Deployment's Pod as the API server holds it, kept out of
// the scheduler's and kwok's hands by a scheduling gate that nothing lifts
// (a Pod bound to a node kwok does not manage would be garbage collected).
func crowdPod(ns string, i int) *corev1.Pod {
	m := crowdMeta(ns, fmt.Sprintf("crowd-%05d", i), i)
	m.Labels["pod-template-hash"] = "5d8f7c9b6"
	env := make([]corev1.EnvVar, 8)
	for j := range env {
		env[j] = corev1.EnvVar{Name: fmt.Sprintf("SETTING_%d", j), Value: fmt.Sprintf("value-%d-%d", i, j)}
	}
	return &corev1.Pod{
		ObjectMeta: m,
		Spec: corev1.PodSpec{
			SchedulingGates: []corev1.PodSchedulingGate{{Name: "scale.claimwarden.dev/never"}},
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.example.com/team/app:1.2.3", Env: env,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}},
			}},
		},
	}
}

// crowdClaim is a claim pre-bound to a volume that does not exist: the PV
// controller leaves it Pending with no write and no event (a bound claim
// costs it four writes, one claim at a time, and a claim waiting for a
// provisioner an event on every sync), and nothing provisions it.
func crowdClaim(ns string, i int) *corev1.PersistentVolumeClaim {
	class := "crowd-static"
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: crowdMeta(ns, fmt.Sprintf("crowd-data-%05d", i), i),
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: &class,
			VolumeName:       fmt.Sprintf("crowd-pv-%05d", i),
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
}

func crowdSecret(ns string, i int) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: crowdMeta(ns, fmt.Sprintf("crowd-secret-%05d", i), i),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"password": []byte(strings.Repeat("s", 32)), "config.yaml": []byte(strings.Repeat("key: value\n", 60))},
	}
}

// crowdRelease is a Helm release record as the Helm CLI stores it: its
// labels are what claimwarden's watch of release records selects, its
// payload (a gzipped, base64 release of a few kilobytes) what it must not
// read.
func crowdRelease(ns string, i int) *corev1.Secret {
	name := fmt.Sprintf("crowd-rel-%05d", i)
	m := crowdMeta(ns, "sh.helm.release.v1."+name+".v1", i)
	for k, v := range map[string]string{"owner": "helm", "name": name, "status": "deployed", "version": "1"} {
		m.Labels[k] = v
	}
	return &corev1.Secret{
		ObjectMeta: m,
		Type:       "helm.sh/release.v1",
		Data:       map[string][]byte{"release": []byte(strings.Repeat("H4sIAAAAAAAC/+xa", 512))},
	}
}

func crowdConfigMap(ns string, i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: crowdMeta(ns, fmt.Sprintf("crowd-config-%05d", i), i),
		Data:       map[string]string{"settings.yaml": strings.Repeat("setting: value\n", 60)},
	}
}
