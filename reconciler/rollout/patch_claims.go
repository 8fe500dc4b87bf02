package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/assess"
	"github.com/claimwarden/claimwarden/reconciler/crashpoint"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// patchOutcome is what the patch step did.
type patchOutcome struct {
	// patched are the claims the API server accepted a patch for, as it
	// returned them.
	patched map[string]*corev1.PersistentVolumeClaim
	// rejected is the patch the API server refused (the rollout then stops).
	rejected *rejection
}

// patchClaims patches the planned claims of this step and reports what the
// API server accepted and, in plan order, the first patch it refused (the
// rollout then stops; claims accepted beside it are recorded as patched). A
// rejection seen before is not repeated until its back-off ends, unless the
// StatefulSet or the claim changed since.
func (r *Reconciler) patchClaims(ctx context.Context, sts *appsv1.StatefulSet, src v1alpha1.Source, byName map[string]*corev1.PersistentVolumeClaim, todo []diff.ClaimChange, ignoredLabels []string) patchOutcome {
	key := client.ObjectKeyFromObject(sts)
	out := patchOutcome{patched: map[string]*corev1.PersistentVolumeClaim{}}
	version := func(name string) string {
		if pvc := byName[name]; pvc != nil {
			return pvc.ResourceVersion
		}
		return ""
	}
	if prev := r.memory.rejection(key); prev != nil {
		if prev.generation == sts.Generation && prev.pvcVersion == version(prev.claim) && time.Now().Before(prev.notBefore) {
			out.rejected = prev
			return out
		}
		r.memory.setRejection(key, nil)
	}
	var accepted []diff.ClaimChange
	for i, res := range r.applyClaims(ctx, sts, todo, ignoredLabels) {
		c, applied := todo[i], res.pvc
		if res.err != nil {
			patchesTotal.WithLabelValues(r.clusterLabel, "rejected").Inc()
			if out.rejected == nil {
				out.rejected = &rejection{
					claim:      c.Name,
					pvcVersion: version(c.Name),
					generation: sts.Generation,
					message:    fmt.Sprintf("patching PVC %s/%s: %v", sts.Namespace, c.Name, res.err),
					notBefore:  time.Now().Add(r.retry.When(key)),
				}
				r.memory.setRejection(key, out.rejected)
			}
			continue
		}
		patchesTotal.WithLabelValues(r.clusterLabel, "accepted").Inc()
		out.patched[c.Name] = applied
		if from := version(c.Name); from != "" && applied.ResourceVersion != from {
			r.memory.patchedClaim(key, c.Name, from)
		}
		accepted = append(accepted, c)
		ctrl.LoggerFrom(ctx).Info("patched claim", "pvc", c.Name, "from", c.RequestFrom.String(), "to", c.RequestTo.String())
		crashpoint.Reached(crashpoint.ClaimPatched)
	}
	r.recordPatched(sts, byName, src, accepted)
	return out
}

// recordPatched records one ClaimPatched event for the claims of a step:
// an event per claim would say the same thing once for each and double the
// step's writes. A step of one claim (the default) names the claim as the
// related object, which kubectl shows beside it; the events API folds
// events that share reason, regarding and related objects into one series.
func (r *Reconciler) recordPatched(sts *appsv1.StatefulSet, byName map[string]*corev1.PersistentVolumeClaim, src v1alpha1.Source, patched []diff.ClaimChange) {
	switch len(patched) {
	case 0:
	case 1:
		r.events.Eventf(sts, byName[patched[0].Name], src, corev1.EventTypeNormal, v1alpha1.ReasonClaimPatched, "Patch", "%s", describePatch(patched[0]))
	default:
		r.events.Eventf(sts, nil, src, corev1.EventTypeNormal, v1alpha1.ReasonClaimPatched, "Patch", "%s", describeStep(patched))
	}
}

// maxEventNote is the longest note the API server takes on an event
// (events.k8s.io: 1 kB).
const maxEventNote = 1024

// describeStep renders the claims of one step for its event: their names
// and what changed, once when it is the same for each; cut short, saying
// how many claims there were, where it would not fit an event.
func describeStep(patched []diff.ClaimChange) string {
	names := make([]string, len(patched))
	changes := make([]string, len(patched))
	for i, c := range patched {
		names[i], changes[i] = c.Name, describeChange(c)
	}
	var s string
	if slices.Equal(changes, slices.Repeat(changes[:1], len(changes))) {
		s = fmt.Sprintf("patched %d PVCs %s", len(patched), strings.Join(names, ", "))
		if changes[0] != "" {
			s += ": " + changes[0]
		}
	} else {
		parts := make([]string, len(patched))
		for i, c := range patched {
			parts[i] = describePatch(c)
		}
		s = fmt.Sprintf("%d PVCs: %s", len(patched), strings.Join(parts, "; "))
	}
	if len(s) > maxEventNote {
		tail := fmt.Sprintf("… (%d PVCs in all)", len(patched))
		s = strings.ToValidUTF8(s[:maxEventNote-len(tail)], "") + tail
	}
	return s
}

// applyResult is one claim's apply: the claim as the API server answered,
// or its refusal.
type applyResult struct {
	pvc *corev1.PersistentVolumeClaim
	err error
}

// applyClaims applies the claims of one step side by side, results in the
// order of todo. The plan holds at most MaxConcurrentPatches claims, each
// already cleared by the policies, so none waits on another; sent one after
// the other, a step of N claims held its worker for N round trips to the API
// server, which at scale were most of the step's time.
func (r *Reconciler) applyClaims(ctx context.Context, sts *appsv1.StatefulSet, todo []diff.ClaimChange, ignoredLabels []string) []applyResult {
	results := make([]applyResult, len(todo))
	var wg sync.WaitGroup
	for i := range todo {
		wg.Go(func() {
			results[i].pvc, results[i].err = r.applyClaim(ctx, sts, todo[i], ignoredLabels)
		})
	}
	wg.Wait()
	return results
}

// afterPatches assesses the claims again as the API server returned them
// from this reconcile's patches, so that the status it writes already says
// what the next reconcile will find (Resizing, or Compatible) instead of a
// Patching that the next one overwrites: one status write per step. A claim
// the new plan would patch (a slot freed by a patch that is complete at
// once) waits for that next reconcile.
func (r *Reconciler) afterPatches(ctx context.Context, sts *appsv1.StatefulSet, t target, a assess.Assessment, out patchOutcome) (assess.Assessment, error) {
	if len(out.patched) == 0 {
		return a, nil
	}
	pvcs := make([]corev1.PersistentVolumeClaim, 0, len(a.Claims))
	for name, pvc := range a.Claims {
		if applied := out.patched[name]; applied != nil {
			pvc = applied
		}
		pvcs = append(pvcs, *pvc)
	}
	after, err := r.assessClaims(ctx, sts, t, pvcs, false)
	if err != nil {
		return a, err
	}
	after.Hold("waiting: patched after the claims patched just now")
	return after, nil
}

// applyClaim is where a PVC is patched: one server-side apply under our field
// manager carrying the storage request (never lower than the claim's own),
// the template's VolumeAttributesClass when the storage classes match, and the
// template's labels and annotations except GitOps tracking keys and the
// labels a build injects into every template (ignoredLabels). Applying the
// whole template set means a label dropped from the template is released by
// us, as KEP-4650 describes; entries others set are never touched. It
// returns the claim as the API server answered the apply.
func (r *Reconciler) applyClaim(ctx context.Context, sts *appsv1.StatefulSet, c diff.ClaimChange, ignoredLabels []string) (*corev1.PersistentVolumeClaim, error) {
	spec := corev1ac.PersistentVolumeClaimSpec().
		WithResources(corev1ac.VolumeResourceRequirements().
			WithRequests(corev1.ResourceList{corev1.ResourceStorage: c.RequestTo}))
	if c.VACTo != nil && *c.VACTo != "" {
		spec.WithVolumeAttributesClassName(*c.VACTo)
	}
	pvc := corev1ac.PersistentVolumeClaim(c.Name, sts.Namespace).WithSpec(spec)
	if t := plan.TemplateNamed(sts, c.Template); t != nil {
		pvc.WithLabels(withoutKeys(t.Labels, ignoredLabels)).WithAnnotations(withoutKeys(t.Annotations, nil))
	}
	if c.Recovery {
		// The storage forgets the failure once it reaches the lower size;
		// the claim remembers, until its next patch (which omits it).
		pvc.WithAnnotations(map[string]string{v1alpha1.RecoveredFromAnnotation: c.RequestFrom.String()})
	}
	r.writer.floor(pvc)
	return r.writer.apply(ctx, pvc, v1alpha1.ControllerName)
}

// apply is where every claim is written: one server-side apply of pvc under
// the field manager owner, taking the fields it carries over from other
// managers. It returns the claim as the API server answered the apply.
func (w *Writer) apply(ctx context.Context, pvc *corev1ac.PersistentVolumeClaimApplyConfiguration, owner string) (*corev1.PersistentVolumeClaim, error) {
	if err := w.client.Apply(ctx, pvc, client.FieldOwner(owner), client.ForceOwnership); err != nil {
		return nil, err
	}
	return appliedClaim(pvc)
}

// appliedClaim is the claim the API server answered an apply with: the
// client decodes the answer into the apply configuration, whose JSON is the
// claim's.
func appliedClaim(ac *corev1ac.PersistentVolumeClaimApplyConfiguration) (*corev1.PersistentVolumeClaim, error) {
	b, err := json.Marshal(ac)
	if err != nil {
		return nil, fmt.Errorf("reading the applied PVC: %w", err)
	}
	var pvc corev1.PersistentVolumeClaim
	if err := json.Unmarshal(b, &pvc); err != nil {
		return nil, fmt.Errorf("reading the applied PVC: %w", err)
	}
	return &pvc, nil
}

// withoutKeys is in without GitOps tracking keys and the keys of ignore.
func withoutKeys(in map[string]string, ignore []string) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		if !diff.IsTrackingKey(k) && !slices.Contains(ignore, k) {
			out[k] = v
		}
	}
	return out
}

// describePatch renders a claim change for events and messages.
func describePatch(c diff.ClaimChange) string {
	s := "patched PVC " + c.Name
	if change := describeChange(c); change != "" {
		s += ": " + change
	}
	return s
}

// describeChange says what a claim change changes.
func describeChange(c diff.ClaimChange) string {
	var parts []string
	if c.ToBytes != c.FromBytes {
		storage := fmt.Sprintf("storage %s → %s", c.RequestFrom.String(), c.RequestTo.String())
		if c.Recovery {
			storage += fmt.Sprintf(" to recover from the failed expansion to %s", c.RequestFrom.String())
		}
		parts = append(parts, storage)
	}
	if c.VACTo != nil && (c.VACFrom == nil || *c.VACFrom != *c.VACTo) {
		parts = append(parts, "volumeAttributesClassName → "+*c.VACTo)
	}
	if n := len(c.Labels) + len(c.Annotations); n > 0 {
		parts = append(parts, fmt.Sprintf("%d label(s)/annotation(s)", n))
	}
	return strings.Join(parts, ", ")
}
