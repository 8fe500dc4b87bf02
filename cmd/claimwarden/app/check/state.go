package check

import (
	"fmt"
	"maps"
	"math"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// defaultClassAnnotation marks the StorageClass the DefaultStorageClass
// admission plugin gives claims that name none.
const defaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

// current is what a proposal is compared with — the live cluster or base
// manifests — reduced to what the controller reads.
type current struct {
	// statefulSets by namespace/name.
	statefulSets map[string]statefulSet
	// claims by namespace, then name.
	claims map[string]map[string]claim
	// ordinals of the claims named like a StatefulSet's, by namespace, then
	// the name without its ordinal ("<template>-<statefulset>"): a
	// StatefulSet's claims are found without a look-up per replica.
	ordinals map[string]map[string][]int32
	// storageClasses and namespaces by name; a missing one is unknown.
	storageClasses map[string]*storagev1.StorageClass
	namespaces     map[string]*corev1.Namespace
	// quotas are the ResourceQuotas by namespace, then name.
	quotas map[string]map[string]*corev1.ResourceQuota
	// baseClass is the class base claims that name none get: the base's
	// default StorageClass, not the proposal's.
	baseClass string
	// proposed, in the state with the proposal's cluster objects, says
	// where it differs from the current one (withProposed); nil otherwise.
	proposed *proposedFacts
	// server is what the cluster's API server supports (with a cluster
	// only: the base's manifests cannot say).
	server policies.Server
}

// statefulSet is a current StatefulSet: a live one, or a base one kept as
// the JSON it was typed from and typed again when asked for, since typed,
// thousands of them would take four times the memory.
type statefulSet struct {
	live *appsv1.StatefulSet
	base []byte
}

// claim is a current claim: a live one, or the one the template of a base
// StatefulSet (by namespace/name) stands for at an ordinal, made when asked
// for (baseClaim), since most of them never are (unchanged templates).
type claim struct {
	live     *corev1.PersistentVolumeClaim
	owner    string
	template int
	ordinal  int32
}

func newCurrent() *current {
	return &current{
		statefulSets:   map[string]statefulSet{},
		claims:         map[string]map[string]claim{},
		ordinals:       map[string]map[string][]int32{},
		storageClasses: map[string]*storagev1.StorageClass{},
		namespaces:     map[string]*corev1.Namespace{},
		quotas:         map[string]map[string]*corev1.ResourceQuota{},
	}
}

// statefulSet is the current StatefulSet namespace/name, or nil.
func (c *current) statefulSet(key string) (*appsv1.StatefulSet, error) {
	s, ok := c.statefulSets[key]
	switch {
	case !ok:
		return nil, nil
	case s.live != nil:
		return s.live, nil
	}
	return manifests.TypeAgain(s.base)
}

// pvc is claim cl; a base one is made anew from its owner, typed once
// into owners (by namespace/name).
func (c *current) pvc(cl claim, owners map[string]*appsv1.StatefulSet) (*corev1.PersistentVolumeClaim, error) {
	if cl.live != nil {
		return cl.live, nil
	}
	owner := owners[cl.owner]
	if owner == nil {
		var err error
		if owner, err = c.statefulSet(cl.owner); err != nil {
			return nil, err
		}
		owners[cl.owner] = owner
	}
	return baseClaim(owner, &owner.Spec.VolumeClaimTemplates[cl.template], cl.ordinal, c.baseClass), nil
}

func (c *current) addClaim(namespace, name string, cl claim) {
	m := c.claims[namespace]
	if m == nil {
		m = map[string]claim{}
		c.claims[namespace] = m
	}
	m[name] = cl
	stem, ordinal, ok := diff.SplitOrdinal(name)
	if !ok {
		return
	}
	o := c.ordinals[namespace]
	if o == nil {
		o = map[string][]int32{}
		c.ordinals[namespace] = o
	}
	o[stem] = append(o[stem], ordinal)
}

// maxBaseClaims bounds the claims one base StatefulSet stands for: its
// replicas are the pull request's to choose.
const maxBaseClaims = 10_000

// addBase adds a base StatefulSet, js being the JSON it was typed from. It
// stands for itself, and each of its templates for one claim per replica,
// created by the StatefulSet controller from that template and grown to
// its request (Bound, capacity = request). A StatefulSet scaled to zero
// keeps the claims of its earlier replicas, so each of its templates
// stands for one claim, of the first ordinal, which the next scale-up
// reaches. The base's StorageClasses and Namespaces come after its
// StatefulSets (setBaseClusterObjects).
func (c *current) addBase(s manifests.StatefulSet, js []byte) error {
	key := s.Namespace + "/" + s.Name
	c.statefulSets[key] = statefulSet{base: js}
	start := int64(0)
	if s.Spec.Ordinals != nil {
		start = int64(s.Spec.Ordinals.Start)
	}
	replicas := max(int64(*s.Spec.Replicas), 1)
	// int64: start + replicas may pass the largest int32 ordinal.
	end := min(start+replicas, math.MaxInt32+1)
	if n := int64(len(s.Spec.VolumeClaimTemplates)) * (end - start); n > maxBaseClaims {
		return fmt.Errorf("StatefulSet %s/%s (%s): spec.replicas: %d replicas of %d templates stand for %d claims, more than the %d a base StatefulSet may",
			s.Namespace, s.Name, s.Location, *s.Spec.Replicas, len(s.Spec.VolumeClaimTemplates), n, maxBaseClaims)
	}
	for i, t := range s.Spec.VolumeClaimTemplates {
		for o := start; o < end; o++ {
			c.addClaim(s.Namespace, diff.ClaimName(t.Name, s.Name, int32(o)), claim{owner: key, template: i, ordinal: int32(o)})
		}
	}
	return nil
}

// setBaseClusterObjects uses the base's StorageClasses and Namespaces as
// the cluster's, its default class for the claims of its StatefulSets.
func (c *current) setBaseClusterObjects(objs []manifests.Object) error {
	if err := c.addClusterObjects(objs); err != nil {
		return err
	}
	c.baseClass = c.defaultClass()
	return nil
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

// addClusterObjects records the StorageClasses, Namespaces and
// ResourceQuotas among objs, replacing what is known: the proposal's own
// ones are applied with it. A quota applied again keeps what is used of
// the one it replaces: its limits change, not the claims.
func (c *current) addClusterObjects(objs []manifests.Object) error {
	for _, o := range objs {
		target := clusterTarget(o)
		if target == nil {
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, target); err != nil {
			return fmt.Errorf("%s %s (%s): %w", o.GetKind(), o.GetName(), o.Location, err)
		}
		switch t := target.(type) {
		case *storagev1.StorageClass:
			c.storageClasses[o.GetName()] = t
		case *corev1.Namespace:
			c.namespaces[o.GetName()] = t
		case *corev1.ResourceQuota:
			if known := c.quotas[t.Namespace][t.Name]; known != nil && known.Status.Used != nil {
				t.Status.Used = known.Status.Used
			}
			c.addQuota(t)
		}
	}
	return nil
}

func (c *current) addQuota(q *corev1.ResourceQuota) {
	m := c.quotas[q.Namespace]
	if m == nil {
		m = map[string]*corev1.ResourceQuota{}
		c.quotas[q.Namespace] = m
	}
	m[q.Name] = q
}

// clusterTarget is an empty StorageClass, Namespace or ResourceQuota for
// o to be read into when it is one, else nil.
func clusterTarget(o manifests.Object) any {
	switch gvk := o.GroupVersionKind(); {
	case gvk.Group == "storage.k8s.io" && gvk.Version == "v1" && gvk.Kind == "StorageClass":
		return &storagev1.StorageClass{}
	case gvk.Group == "" && gvk.Version == "v1" && gvk.Kind == "Namespace":
		return &corev1.Namespace{}
	case gvk.Group == "" && gvk.Version == "v1" && gvk.Kind == "ResourceQuota":
		return &corev1.ResourceQuota{}
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
