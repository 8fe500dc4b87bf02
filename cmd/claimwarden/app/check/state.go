package check

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// defaultClassAnnotation marks the StorageClass the DefaultStorageClass
// admission plugin gives claims that name none.
const defaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

// current is what a proposal is compared with — the live cluster or base
// manifests — reduced to what the controller reads.
type current struct {
	// statefulSets by namespace/name.
	statefulSets map[string]*appsv1.StatefulSet
	// claims by namespace, then name.
	claims map[string]map[string]*corev1.PersistentVolumeClaim
	// ordinals of the claims named like a StatefulSet's, by namespace, then
	// the name without its ordinal ("<template>-<statefulset>"): a
	// StatefulSet's claims are found without a look-up per replica.
	ordinals map[string]map[string][]int32
	// storageClasses and namespaces by name; a missing one is unknown.
	storageClasses map[string]*storagev1.StorageClass
	namespaces     map[string]*corev1.Namespace
}

func newCurrent() *current {
	return &current{
		statefulSets:   map[string]*appsv1.StatefulSet{},
		claims:         map[string]map[string]*corev1.PersistentVolumeClaim{},
		ordinals:       map[string]map[string][]int32{},
		storageClasses: map[string]*storagev1.StorageClass{},
		namespaces:     map[string]*corev1.Namespace{},
	}
}

func (c *current) addClaim(pvc *corev1.PersistentVolumeClaim) {
	m := c.claims[pvc.Namespace]
	if m == nil {
		m = map[string]*corev1.PersistentVolumeClaim{}
		c.claims[pvc.Namespace] = m
	}
	m[pvc.Name] = pvc
	stem, ordinal, ok := splitOrdinal(pvc.Name)
	if !ok {
		return
	}
	o := c.ordinals[pvc.Namespace]
	if o == nil {
		o = map[string][]int32{}
		c.ordinals[pvc.Namespace] = o
	}
	o[stem] = append(o[stem], ordinal)
}

// splitOrdinal cuts "<stem>-<ordinal>", the ordinal as the StatefulSet
// controller prints it (no sign, no leading zero).
func splitOrdinal(name string) (string, int32, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != name[i+1:] {
		return "", 0, false
	}
	return name[:i], int32(n), true
}

// maxBaseClaims bounds the claims one base StatefulSet stands for: its
// replicas are the pull request's to choose.
const maxBaseClaims = 10_000

// baseState builds the current state from base manifests: each base
// StatefulSet stands for itself, and each of its templates for one claim
// per replica, created by the StatefulSet controller from that template
// and grown to its request (Bound, capacity = request). A StatefulSet
// scaled to zero keeps the claims of its earlier replicas, so each of its
// templates stands for one claim, of the first ordinal, which the next
// scale-up reaches. StorageClasses and Namespaces among the objects are
// used as the cluster's.
func baseState(sets []manifests.StatefulSet, objs []manifests.Object) (*current, error) {
	cur := newCurrent()
	if err := cur.addClusterObjects(objs); err != nil {
		return nil, err
	}
	defaultClass := cur.defaultClass()
	for _, s := range sets {
		cur.statefulSets[s.Namespace+"/"+s.Name] = s.StatefulSet
		start := int64(0)
		if s.Spec.Ordinals != nil {
			start = int64(s.Spec.Ordinals.Start)
		}
		replicas := max(int64(*s.Spec.Replicas), 1)
		// int64: start + replicas may pass the largest int32 ordinal.
		end := min(start+replicas, math.MaxInt32+1)
		if n := int64(len(s.Spec.VolumeClaimTemplates)) * (end - start); n > maxBaseClaims {
			return nil, fmt.Errorf("StatefulSet %s/%s (%s): spec.replicas: %d replicas of %d templates stand for %d claims, more than the %d a base StatefulSet may",
				s.Namespace, s.Name, s.Location, *s.Spec.Replicas, len(s.Spec.VolumeClaimTemplates), n, maxBaseClaims)
		}
		for i := range s.Spec.VolumeClaimTemplates {
			for o := start; o < end; o++ {
				cur.addClaim(baseClaim(s.StatefulSet, &s.Spec.VolumeClaimTemplates[i], int32(o), defaultClass))
			}
		}
	}
	return cur, nil
}

// baseClaim is the claim the StatefulSet controller creates for template t
// and ordinal o: the template's labels plus the selector's, its
// annotations and spec, the default class filled in when it names none.
func baseClaim(sts *appsv1.StatefulSet, t *corev1.PersistentVolumeClaim, o int32, defaultClass string) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{}
	pvc.APIVersion, pvc.Kind = "v1", "PersistentVolumeClaim"
	pvc.Namespace, pvc.Name = sts.Namespace, diff.ClaimName(t.Name, sts.Name, o)
	pvc.Labels = maps.Clone(t.Labels)
	if sts.Spec.Selector != nil && len(sts.Spec.Selector.MatchLabels) > 0 {
		if pvc.Labels == nil {
			pvc.Labels = map[string]string{}
		}
		maps.Copy(pvc.Labels, sts.Spec.Selector.MatchLabels)
	}
	pvc.Annotations = maps.Clone(t.Annotations)
	pvc.Spec = *t.Spec.DeepCopy()
	if pvc.Spec.StorageClassName == nil && defaultClass != "" {
		pvc.Spec.StorageClassName = &defaultClass
	}
	pvc.Status = corev1.PersistentVolumeClaimStatus{
		Phase:                            corev1.ClaimBound,
		AccessModes:                      pvc.Spec.AccessModes,
		Capacity:                         corev1.ResourceList{corev1.ResourceStorage: pvc.Spec.Resources.Requests[corev1.ResourceStorage].DeepCopy()},
		CurrentVolumeAttributesClassName: pvc.Spec.VolumeAttributesClassName,
	}
	return pvc
}

// addClusterObjects records the StorageClasses and Namespaces among objs,
// replacing what is known: the proposal's own ones are applied with it.
func (c *current) addClusterObjects(objs []manifests.Object) error {
	for _, o := range objs {
		var target any
		switch gvk := o.GroupVersionKind(); {
		case gvk.Group == "storage.k8s.io" && gvk.Version == "v1" && gvk.Kind == "StorageClass":
			sc := &storagev1.StorageClass{}
			c.storageClasses[o.GetName()], target = sc, sc
		case gvk.Group == "" && gvk.Version == "v1" && gvk.Kind == "Namespace":
			ns := &corev1.Namespace{}
			c.namespaces[o.GetName()], target = ns, ns
		default:
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, target); err != nil {
			return fmt.Errorf("%s %s (%s): %w", o.GetKind(), o.GetName(), o.Location, err)
		}
	}
	return nil
}

// defaultClass is the name of the StorageClass marked default, or "";
// of several, the first by name, so that a run is reproducible.
func (c *current) defaultClass() string {
	for _, name := range slices.Sorted(maps.Keys(c.storageClasses)) {
		if c.storageClasses[name].Annotations[defaultClassAnnotation] == "true" {
			return name
		}
	}
	return ""
}
