package rollout_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

const timeout = 90 * time.Second

var namespaces atomic.Int32

// namespace creates a namespace for one test.
func namespace(t *testing.T, c client.Client) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 55 {
		name = name[:55]
	}
	// Unique per run, so -count=N works.
	name = fmt.Sprintf("%s-%d", name, namespaces.Add(1))
	if err := fixtures.Namespace(context.Background(), c, name); err != nil {
		t.Fatal(err)
	}
	return name
}

// createReady creates sts and waits until its Pods are ready and its claims
// bound with their requested capacity.
func createReady(t *testing.T, c client.Client, sts *appsv1.StatefulSet) {
	t.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, sts); err != nil {
		t.Fatal(err)
	}
	if err := fixtures.WaitReady(ctx, c, client.ObjectKeyFromObject(sts), timeout); err != nil {
		t.Fatal(err)
	}
	waitRollout(t, c, client.ObjectKeyFromObject(sts), "Ready", func(v *v1alpha1.VolumeClaimRollout) bool {
		return conditions.IsReady(v)
	})
}

// waitRollout polls the VolumeClaimRollout until ok holds, and returns it.
func waitRollout(t *testing.T, c client.Client, key client.ObjectKey, what string, ok func(*v1alpha1.VolumeClaimRollout) bool) *v1alpha1.VolumeClaimRollout {
	t.Helper()
	vcr := &v1alpha1.VolumeClaimRollout{}
	err := wait.PollUntilContextTimeout(context.Background(), fixtures.Poll, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, vcr); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return ok(vcr), nil
	})
	if err != nil {
		t.Fatalf("VolumeClaimRollout %s never %s; last status: %s", key, what, describe(vcr))
	}
	return vcr
}

func describe(v *v1alpha1.VolumeClaimRollout) string {
	var b strings.Builder
	fmt.Fprintf(&b, "progress=%s counts=%+v problems=%q", v.Status.Progress, v.Status.Counts, v.Status.Problems)
	for _, c := range v.Status.Conditions {
		fmt.Fprintf(&b, "\n  %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	for _, c := range v.Status.Claims {
		fmt.Fprintf(&b, "\n  claim %s %s→%s %s %s", c.Name, c.From, c.To, c.Phase, c.Message)
	}
	return b.String()
}

func stalled(v *v1alpha1.VolumeClaimRollout) bool { return conditions.IsStalled(v) }

func readyTrue(v *v1alpha1.VolumeClaimRollout) bool {
	return conditions.IsReady(v) && v.Status.ObservedGeneration > 0
}

// claim returns a PVC.
func claim(t *testing.T, c client.Client, ns, name string) *corev1.PersistentVolumeClaim {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, pvc); err != nil {
		t.Fatal(err)
	}
	return pvc
}

func request(pvc *corev1.PersistentVolumeClaim) resource.Quantity {
	return pvc.Spec.Resources.Requests[corev1.ResourceStorage]
}

func capacity(pvc *corev1.PersistentVolumeClaim) resource.Quantity {
	return pvc.Status.Capacity[corev1.ResourceStorage]
}

// events returns the events with reason in ns, oldest first.
func events(t *testing.T, c client.Client, ns, reason string) []eventsv1.Event {
	t.Helper()
	var list eventsv1.EventList
	if err := c.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Reason == reason {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].EventTime.Before(&out[j].EventTime) })
	return out
}

// waitEvents polls until ns has at least n events with reason.
func waitEvents(t *testing.T, c client.Client, ns, reason string, n int) []eventsv1.Event {
	t.Helper()
	var got []eventsv1.Event
	err := wait.PollUntilContextTimeout(context.Background(), fixtures.Poll, timeout, true, func(context.Context) (bool, error) {
		got = events(t, c, ns, reason)
		return len(got) >= n, nil
	})
	if err != nil {
		t.Fatalf("want %d %s events in %s, got %d", n, reason, ns, len(got))
	}
	return got
}

func condition(v *v1alpha1.VolumeClaimRollout, t string) string {
	c := conditions.Get(v, t)
	if c == nil {
		return "<none>"
	}
	return c.Reason + ": " + c.Message
}
