package assess

import (
	"cmp"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/utils/ptr"

	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// compare diffs the desired templates with the claims; with LookAhead,
// also the claims outside the desired ordinals.
func compare(in Input) (diff.Result, error) {
	d := diff.Input{
		Desired: in.Desired, PVCs: in.Claims, IgnoreLabels: in.IgnoredLabels, MaxClaims: in.MaxClaims,
		NoVolumeAttributesClasses: in.Server.VolumeAttributesClasses != nil && !*in.Server.VolumeAttributesClasses,
	}
	if in.Recreate {
		d.LiveTemplates = diff.LiveTemplatesOf(in.Live)
	}
	if in.LookAhead {
		return compareAll(d)
	}
	return diff.Compute(d)
}

// compareAll is diff.Compute, also over the claims of in.PVCs outside the
// desired StatefulSet's ordinals: each such ordinal is compared as the only
// one of a StatefulSet of one replica, which is how the controller will
// compare it once the replicas reach it. Claims come in template order,
// then ordinal order.
func compareAll(in diff.Input) (diff.Result, error) {
	res, err := diff.Compute(in)
	if err != nil {
		return res, err
	}
	compared := make(map[string]bool, len(res.Claims))
	for _, c := range res.Claims {
		compared[c.Name] = true
	}
	outside := map[int32]bool{}
	for _, c := range in.PVCs {
		if _, o, ok := diff.SplitOrdinal(c.Name); ok && !compared[c.Name] {
			outside[o] = true
		}
	}
	for _, o := range slices.Sorted(maps.Keys(outside)) {
		one := *in.Desired
		one.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: o}
		one.Spec.Replicas = ptr.To(int32(1))
		at := in
		at.Desired = &one
		r, err := diff.Compute(at)
		if err != nil {
			return res, err
		}
		for _, c := range r.Claims {
			if !c.Missing {
				res.Claims = append(res.Claims, c)
			}
		}
	}
	order := make(map[string]int, len(in.Desired.Spec.VolumeClaimTemplates))
	for i, t := range in.Desired.Spec.VolumeClaimTemplates {
		order[t.Name] = i
	}
	slices.SortStableFunc(res.Claims, func(a, b diff.ClaimChange) int {
		return cmp.Or(cmp.Compare(order[a.Template], order[b.Template]), cmp.Compare(a.Ordinal, b.Ordinal))
	})
	return res, nil
}
