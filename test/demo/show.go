package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// showClaims prints the PVCs like `kubectl get pvc` with the request and the
// capacity side by side: the request is what was asked, the capacity what the
// storage delivered.
func showClaims(ctx context.Context, c client.Client, out *printer) error {
	var list corev1.PersistentVolumeClaimList
	if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return err
	}
	rows := [][]string{{"PVC", "Request", "Capacity", "Status", "StorageClass"}}
	for _, pvc := range list.Items {
		rows = append(rows, []string{
			pvc.Name,
			quantity(pvc.Spec.Resources.Requests[corev1.ResourceStorage]),
			quantity(pvc.Status.Capacity[corev1.ResourceStorage]),
			string(pvc.Status.Phase),
			ptrString(pvc.Spec.StorageClassName),
		})
	}
	out.table(rows)
	return nil
}

// claimsCapacity reports whether every claim in the namespace has at least size.
func claimsCapacity(ctx context.Context, c client.Client, size string) error {
	var list corev1.PersistentVolumeClaimList
	if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return err
	}
	want := resource.MustParse(size)
	for _, pvc := range list.Items {
		if got := pvc.Status.Capacity[corev1.ResourceStorage]; got.Cmp(want) < 0 {
			return fmt.Errorf("PVC %s has capacity %s, want %s", pvc.Name, quantity(got), size)
		}
	}
	return nil
}

// claimsAtSize fails unless every claim in the namespace requests and has
// exactly size: what a denied change must leave.
func claimsAtSize(ctx context.Context, c client.Client, size string) error {
	var list corev1.PersistentVolumeClaimList
	if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return err
	}
	want := resource.MustParse(size)
	for _, pvc := range list.Items {
		req, got := pvc.Spec.Resources.Requests[corev1.ResourceStorage], pvc.Status.Capacity[corev1.ResourceStorage]
		if req.Cmp(want) != 0 || got.Cmp(want) != 0 {
			return fmt.Errorf("PVC %s has request %s and capacity %s, want %s untouched", pvc.Name, quantity(req), quantity(got), size)
		}
	}
	return nil
}

// podUIDs maps the StatefulSet's Pods to their UIDs; a Pod deleted and
// re-created under the same name gets a new UID.
func podUIDs(ctx context.Context, c client.Client) (map[string]types.UID, error) {
	var list corev1.PodList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{"app": stsName}); err != nil {
		return nil, err
	}
	uids := make(map[string]types.UID, len(list.Items))
	for _, p := range list.Items {
		uids[p.Name] = p.UID
	}
	return uids, nil
}

// showPods prints the Pods and their UIDs; with before, it says whether each
// is still the same Pod.
func showPods(now, before map[string]types.UID, out *printer) {
	header := []string{"Pod", "UID"}
	if before != nil {
		header = append(header, "Since step 2")
	}
	rows := [][]string{header}
	for _, name := range slices.Sorted(maps.Keys(now)) {
		row := []string{name, string(now[name])}
		if before != nil {
			verdict := "same Pod, never restarted"
			if before[name] != now[name] {
				verdict = "RE-CREATED"
			}
			row = append(row, verdict)
		}
		rows = append(rows, row)
	}
	out.table(rows)
}

// sameUIDs fails unless the same Pods (by UID) are there.
func sameUIDs(before, now map[string]types.UID) error {
	var changed []string
	for name, uid := range before {
		if now[name] != uid {
			changed = append(changed, name)
		}
	}
	if len(changed) > 0 || len(now) != len(before) {
		slices.Sort(changed)
		return fmt.Errorf("the Pods were re-created or removed (%s): %d before, %d now", strings.Join(changed, ", "), len(before), len(now))
	}
	return nil
}

// claimsAt reports whether the rollout lists replicas claims, all brought to
// size and compatible.
func claimsAt(v *v1alpha1.VolumeClaimRollout, size string, replicas int) bool {
	if len(v.Status.Claims) != replicas {
		return false
	}
	want := resource.MustParse(size)
	for _, c := range v.Status.Claims {
		to, err := resource.ParseQuantity(c.To)
		if err != nil || to.Cmp(want) != 0 || c.Phase != v1alpha1.ClaimCompatible {
			return false
		}
	}
	return true
}

func quantity(q resource.Quantity) string {
	if q.IsZero() {
		return "-"
	}
	return q.String()
}

func ptrString(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}
