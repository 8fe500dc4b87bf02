package autoresize

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/authority"
)

// ReasonGrownNow is the event of a claim grown before its pull request is
// merged (the emergency path).
const ReasonGrownNow = "AutoresizeGrownNow"

// growNow is the emergency path: the claims whose proposal said now (the
// volume fills sooner than a person can merge) grow at once to their
// template's new size, which the pull request then writes into Git. A
// claim larger than its template is compatible (KEP-4650), so neither the
// rollout nor the tool fights it. Every patch must be one the tool's
// identity may make (authority); the growths were allowed by the policies
// as the merge's proposal (Decide). It returns the claims grown.
func (j *check) growNow(ctx context.Context, growths []Growth) ([]string, error) {
	type grow struct {
		name string
		to   resource.Quantity
	}
	var todo []grow
	var writes []authority.Write
	for _, g := range growths {
		for _, c := range g.Claims {
			if req := requestOf(j.claims, c.Name); !c.Now || req.Cmp(g.To) >= 0 {
				continue
			}
			todo = append(todo, grow{c.Name, g.To})
			writes = append(writes, authority.PatchClaim(j.sts.Namespace, c.Name))
		}
	}
	if len(todo) == 0 {
		return nil, nil
	}
	if id := j.src.Authority; id != nil {
		if err := j.c.Authority.Check(ctx, *id, writes); err != nil {
			return nil, fmt.Errorf("growing the claims now: %w", err)
		}
	}
	var grown []string
	for _, g := range todo {
		pvc := corev1ac.PersistentVolumeClaim(g.name, j.sts.Namespace).WithSpec(corev1ac.PersistentVolumeClaimSpec().
			WithResources(corev1ac.VolumeResourceRequirements().WithRequests(corev1.ResourceList{corev1.ResourceStorage: g.to})))
		if err := j.c.Client.Apply(ctx, pvc, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			return grown, fmt.Errorf("growing PVC %s/%s to %s now: %w", j.sts.Namespace, g.name, g.to.String(), err)
		}
		grown = append(grown, g.name)
		j.c.Log.Info("grew a claim before its pull request is merged", "statefulset", keyOf(j.sts), "pvc", g.name, "to", g.to.String())
		j.c.Recorder.Eventf(j.sts, nil, j.src.Source, corev1.EventTypeWarning, ReasonGrownNow, "Autoresize",
			"grew claim %s to %s before the pull request is merged: its volume fills sooner than a merge", g.name, g.to.String())
	}
	return grown, nil
}

// requestOf is the storage request of claim name among claims.
func requestOf(claims []corev1.PersistentVolumeClaim, name string) resource.Quantity {
	for _, c := range claims {
		if c.Name == name {
			return c.Spec.Resources.Requests[corev1.ResourceStorage]
		}
	}
	return resource.Quantity{}
}
