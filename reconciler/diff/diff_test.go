package diff

import (
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Fixtures: StatefulSet "web" in namespace "db", selector app=web.

type mut func(*corev1.PersistentVolumeClaim)

func obj(name, request, capacity string, muts ...mut) corev1.PersistentVolumeClaim {
	p := corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "db", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		},
	}
	if request != "" {
		p.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(request)}
	}
	if capacity != "" {
		p.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}
	}
	for _, m := range muts {
		m(&p)
	}
	return p
}

// tmpl is a template: no labels, no class (defaulted), no status.
func tmpl(name, request string, muts ...mut) corev1.PersistentVolumeClaim {
	return obj(name, request, "", append([]mut{func(p *corev1.PersistentVolumeClaim) { p.Labels, p.Namespace = nil, "" }}, muts...)...)
}

// pvc is a bound claim of class "standard".
func pvc(name, request, capacity string, muts ...mut) corev1.PersistentVolumeClaim {
	return obj(name, request, capacity, append([]mut{class("standard")}, muts...)...)
}

func ptr[T any](v T) *T { return &v }

func class(c string) mut {
	return func(p *corev1.PersistentVolumeClaim) { p.Spec.StorageClassName = ptr(c) }
}
func noClass(p *corev1.PersistentVolumeClaim) { p.Spec.StorageClassName = nil }
func vac(c string) mut {
	return func(p *corev1.PersistentVolumeClaim) { p.Spec.VolumeAttributesClassName = ptr(c) }
}
func currentVAC(c string) mut {
	return func(p *corev1.PersistentVolumeClaim) { p.Status.CurrentVolumeAttributesClassName = ptr(c) }
}
func withLabels(kv ...string) mut {
	return func(p *corev1.PersistentVolumeClaim) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for i := 0; i < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}
func withAnnotations(kv ...string) mut {
	return func(p *corev1.PersistentVolumeClaim) {
		p.Annotations = map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			p.Annotations[kv[i]] = kv[i+1]
		}
	}
}
func modes(m ...corev1.PersistentVolumeAccessMode) mut {
	return func(p *corev1.PersistentVolumeClaim) { p.Spec.AccessModes = m }
}
func volumeMode(m corev1.PersistentVolumeMode) mut {
	return func(p *corev1.PersistentVolumeClaim) { p.Spec.VolumeMode = &m }
}
func selector(s *metav1.LabelSelector) mut {
	return func(p *corev1.PersistentVolumeClaim) { p.Spec.Selector = s }
}
func dataSource(name string) mut {
	return func(p *corev1.PersistentVolumeClaim) {
		p.Spec.DataSource = &corev1.TypedLocalObjectReference{APIGroup: ptr("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot", Name: name}
	}
}
func dataSourceRef(name string) mut {
	return func(p *corev1.PersistentVolumeClaim) {
		p.Spec.DataSourceRef = &corev1.TypedObjectReference{APIGroup: ptr("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot", Name: name}
	}
}
func condition(t corev1.PersistentVolumeClaimConditionType, s corev1.ConditionStatus, msg string) mut {
	return func(p *corev1.PersistentVolumeClaim) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PersistentVolumeClaimCondition{Type: t, Status: s, Message: msg})
	}
}
func allocated(s corev1.ClaimResourceStatus) mut {
	return func(p *corev1.PersistentVolumeClaim) {
		p.Status.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{corev1.ResourceStorage: s}
	}
}
func modifyStatus(target string, s corev1.PersistentVolumeClaimModifyVolumeStatus) mut {
	return func(p *corev1.PersistentVolumeClaim) {
		p.Status.ModifyVolumeStatus = &corev1.ModifyVolumeStatus{TargetVolumeAttributesClassName: target, Status: s}
	}
}
func namespace(ns string) mut { return func(p *corev1.PersistentVolumeClaim) { p.Namespace = ns } }

type stsMut func(*appsv1.StatefulSet)

func statefulSet(templates []corev1.PersistentVolumeClaim, muts ...stsMut) *appsv1.StatefulSet {
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "db"},
		Spec: appsv1.StatefulSetSpec{
			Selector:             &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			VolumeClaimTemplates: templates,
		},
	}
	for _, m := range muts {
		m(s)
	}
	return s
}

func replicas(n int32) stsMut { return func(s *appsv1.StatefulSet) { s.Spec.Replicas = &n } }

// podsCounted is the status of a StatefulSet whose controller counted n Pods
// of one revision, not being deleted.
func podsCounted(n int32) stsMut {
	return func(s *appsv1.StatefulSet) {
		s.Status.Replicas, s.Status.CurrentReplicas, s.Status.UpdatedReplicas = n, n, n
		s.Status.CurrentRevision, s.Status.UpdateRevision = "web-1", "web-1"
	}
}
func start(n int32) stsMut {
	return func(s *appsv1.StatefulSet) { s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: n} }
}

// view is what the tests compare: every observable of a ClaimChange, with
// quantities and pointers rendered so that equal values compare equal.
type view struct {
	Name                     string
	Missing                  bool
	From, To, Capacity       string
	VACFrom, VACTo           string
	Labels, Annotations      map[string]string
	Immutable                []Mismatch
	Compatible, OverSized    bool
	NeedsPatch               bool
	ResizeError, ModifyError string
	NodeResizePending        bool
	Reasons                  []string
}

func viewOf(c ClaimChange) view {
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	return view{
		Name: c.Name, Missing: c.Missing,
		From: c.RequestFrom.String(), To: c.RequestTo.String(), Capacity: c.Capacity.String(),
		VACFrom: str(c.VACFrom), VACTo: str(c.VACTo),
		Labels: c.Labels, Annotations: c.Annotations, Immutable: c.Immutable,
		Compatible: c.Compatible, OverSized: c.OverSized, NeedsPatch: c.NeedsPatch(),
		ResizeError: c.ResizeError, ModifyError: c.ModifyError, NodeResizePending: c.NodeResizePending, Reasons: c.Reasons,
	}
}

// compatible is the view of an unchanged, compatible claim of size.
func compatible(name, size string) view {
	return view{Name: name, From: size, To: size, Capacity: size, VACFrom: "<nil>", VACTo: "<nil>", Compatible: true}
}

func with(v view, f func(*view)) view { f(&v); return v }

func TestComputeClaims(t *testing.T) {
	rwo, rwx, rox := corev1.ReadWriteOnce, corev1.ReadWriteMany, corev1.ReadOnlyMany
	cases := []struct {
		name string
		sts  *appsv1.StatefulSet
		pvcs []corev1.PersistentVolumeClaim
		want []view
	}{{
		name: "in sync; template kind and status ignored",
		sts: statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi", func(p *corev1.PersistentVolumeClaim) {
			p.APIVersion, p.Kind = "v1", "PersistentVolumeClaim"
			p.Status.Phase = corev1.ClaimPending
			p.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
		})}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi")},
		want: []view{compatible("data-web-0", "20Gi")},
	}, {
		name: "template increase patches the request",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi")}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "10Gi", "10Gi")},
		want: []view{with(compatible("data-web-0", "10Gi"), func(v *view) {
			v.To, v.Compatible, v.NeedsPatch = "20Gi", false, true
			v.Reasons = []string{"capacity 10Gi < template 20Gi"}
		})},
	}, {
		name: "template decrease: larger PVC is compatible, over-sized, never shrunk",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "10Gi")}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi")},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) { v.OverSized = true })},
	}, {
		name: "over-sized request but capacity below template",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "10Gi")}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "30Gi", "5Gi")},
		want: []view{with(compatible("data-web-0", "30Gi"), func(v *view) {
			v.Capacity, v.OverSized, v.Compatible = "5Gi", true, false
			v.Reasons = []string{"capacity 5Gi < template 10Gi"}
		})},
	}, {
		name: "capacity lagging behind a patched request",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi")}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "10Gi")},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.Capacity, v.Compatible = "10Gi", false
			v.Reasons = []string{"capacity 10Gi < template 20Gi"}
		})},
	}, {
		name: "capacity not reported",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi")}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "")},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.Capacity, v.Compatible = "0", false
			v.Reasons = []string{"capacity not reported yet, template 20Gi"}
		})},
	}, {
		name: "storage class differs: mismatch, no patch, VAC kept",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "30Gi", class("fast"), vac("gold"))}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi", vac("silver"), currentVAC("silver"))},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.To, v.VACFrom, v.VACTo, v.Compatible = "30Gi", "silver", "silver", false
			v.Immutable = []Mismatch{{Field: FieldStorageClass, Live: `"standard"`, Desired: `"fast"`}}
			v.Reasons = []string{
				`storage class: PVC "standard", template "fast"`,
				"capacity 20Gi < template 30Gi",
				`current volume attributes class "silver", template "gold"`,
			}
		})},
	}, {
		name: "template without class matches the defaulted class",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi", noClass)}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi", class("whatever-default"))},
		want: []view{compatible("data-web-0", "20Gi")},
	}, {
		name: "explicit empty class is not the default class",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi", class(""))}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi")},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.Compatible = false
			v.Immutable = []Mismatch{{Field: FieldStorageClass, Live: `"standard"`, Desired: `""`}}
			v.Reasons = []string{`storage class: PVC "standard", template ""`}
		})},
	}, {
		name: "PVC without class against an explicit class",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi", class("fast"))}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi", noClass)},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.Compatible = false
			v.Immutable = []Mismatch{{Field: FieldStorageClass, Live: "(unset)", Desired: `"fast"`}}
			v.Reasons = []string{`storage class: PVC (unset), template "fast"`}
		})},
	}, {
		name: "VAC change in the same class is proposed",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi", class("standard"), vac("gold"))}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi", vac("silver"), currentVAC("silver"))},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.VACFrom, v.VACTo, v.Compatible, v.NeedsPatch = "silver", "gold", false, true
			v.Reasons = []string{`current volume attributes class "silver", template "gold"`}
		})},
	}, {
		name: "VAC patched, driver not done yet",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi", vac("gold"))}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi", vac("gold"))},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.VACFrom, v.VACTo, v.Compatible = "gold", "gold", false
			v.Reasons = []string{`current volume attributes class (unset), template "gold"`}
		})},
	}, {
		name: "empty VAC equals unset VAC",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi", vac(""))}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi", vac(""), currentVAC(""))},
		want: []view{compatible("data-web-0", "20Gi")},
	}, {
		name: "template without VAC leaves the claim's VAC alone",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi")}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi", vac("gold"), currentVAC("silver"))},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) { v.VACFrom, v.VACTo = "gold", "gold" })},
	}, {
		name: "labels and annotations: tracking keys ignored, others proposed",
		sts: statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi",
			withLabels("app.kubernetes.io/instance", "web", "argocd.argoproj.io/instance", "web",
				"kustomize.toolkit.fluxcd.io/name", "apps", "tier", "db", "team", "blue"),
			withAnnotations("argocd.argoproj.io/tracking-id", "x", "backup", "daily"))}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi", withLabels("team", "red"))},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.Compatible, v.NeedsPatch = false, true
			v.Labels = map[string]string{"tier": "db", "team": "blue"}
			v.Annotations = map[string]string{"backup": "daily"}
			v.Reasons = []string{"labels missing or different: team, tier", "annotations missing or different: backup"}
		})},
	}, {
		name: "only tracking keys missing: compatible",
		sts: statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi",
			withLabels("app.kubernetes.io/instance", "web", "tier", "db"),
			withAnnotations("kustomize.toolkit.fluxcd.io/checksum", "abc"))}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi", withLabels("tier", "db", "extra", "kept"))},
		want: []view{compatible("data-web-0", "20Gi")},
	}, {
		name: "access modes compared as sets",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi", modes(rwo, rox, rwo))}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi", modes(rox, rwo))},
		want: []view{compatible("data-web-0", "20Gi")},
	}, {
		name: "access modes differ",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "30Gi", modes(rwx))}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi")},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.To, v.Compatible = "30Gi", false
			v.Immutable = []Mismatch{{Field: FieldAccessModes, Live: "[ReadWriteOnce]", Desired: "[ReadWriteMany]"}}
			v.Reasons = []string{"access modes: PVC [ReadWriteOnce], template [ReadWriteMany]", "capacity 20Gi < template 30Gi"}
		})},
	}, {
		name: "unset volume mode is Filesystem",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi")}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi", volumeMode(corev1.PersistentVolumeFilesystem))},
		want: []view{compatible("data-web-0", "20Gi")},
	}, {
		name: "volume mode differs",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi", volumeMode(corev1.PersistentVolumeBlock))}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi")},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.Compatible = false
			v.Immutable = []Mismatch{{Field: FieldVolumeMode, Live: "Filesystem", Desired: "Block"}}
			v.Reasons = []string{"volume mode: PVC Filesystem, template Block"}
		})},
	}, {
		name: "nil and empty selectors are equal, term order is not compared",
		sts: statefulSet([]corev1.PersistentVolumeClaim{
			tmpl("data", "20Gi", selector(&metav1.LabelSelector{})),
			tmpl("logs", "20Gi", selector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"b", "a"}},
				{Key: "disk", Operator: metav1.LabelSelectorOpExists},
			}})),
		}),
		pvcs: []corev1.PersistentVolumeClaim{
			pvc("data-web-0", "20Gi", "20Gi"),
			pvc("logs-web-0", "20Gi", "20Gi", selector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "disk", Operator: metav1.LabelSelectorOpExists},
				{Key: "zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
			}})),
		},
		want: []view{compatible("data-web-0", "20Gi"), compatible("logs-web-0", "20Gi")},
	}, {
		name: "selector differs",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi", selector(&metav1.LabelSelector{MatchLabels: map[string]string{"pv": "b"}}))}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi", selector(&metav1.LabelSelector{MatchLabels: map[string]string{"pv": "a"}}))},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.Compatible = false
			v.Immutable = []Mismatch{{Field: FieldSelector, Live: "pv=a", Desired: "pv=b"}}
			v.Reasons = []string{"selector: PVC pv=a, template pv=b"}
		})},
	}, {
		name: "dataSource in the template equals its mirror in dataSourceRef",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi", dataSource("snap"))}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi", dataSource("snap"), dataSourceRef("snap"))},
		want: []view{compatible("data-web-0", "20Gi")},
	}, {
		name: "data source differs",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi", dataSourceRef("snap-2"))}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi", dataSource("snap-1"), dataSourceRef("snap-1"))},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.Compatible = false
			v.Immutable = []Mismatch{{Field: FieldDataSource,
				Live: "VolumeSnapshot.snapshot.storage.k8s.io snap-1", Desired: "VolumeSnapshot.snapshot.storage.k8s.io snap-2"}}
			v.Reasons = []string{"data source: PVC VolumeSnapshot.snapshot.storage.k8s.io snap-1, template VolumeSnapshot.snapshot.storage.k8s.io snap-2"}
		})},
	}, {
		name: "resize error condition surfaced, false conditions ignored",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi")}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "10Gi",
			condition(corev1.PersistentVolumeClaimNodeResizeError, corev1.ConditionFalse, "old"),
			condition(corev1.PersistentVolumeClaimControllerResizeError, corev1.ConditionTrue, "quota exceeded"))},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.Capacity, v.Compatible = "10Gi", false
			v.ResizeError = "ControllerResizeError: quota exceeded"
			v.Reasons = []string{"capacity 10Gi < template 20Gi", "resize failed: ControllerResizeError: quota exceeded"}
		})},
	}, {
		name: "infeasible allocated resource status surfaced without a condition",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi")}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "10Gi", allocated(corev1.PersistentVolumeClaimNodeResizeInfeasible))},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.Capacity, v.Compatible = "10Gi", false
			v.ResizeError = "allocatedResourceStatuses.storage is NodeResizeInfeasible"
			v.Reasons = []string{"capacity 10Gi < template 20Gi", "resize failed: allocatedResourceStatuses.storage is NodeResizeInfeasible"}
		})},
	}, {
		name: "resize in progress is no error",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi")}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "10Gi", allocated(corev1.PersistentVolumeClaimNodeResizeInProgress))},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.Capacity, v.Compatible = "10Gi", false
			v.Reasons = []string{"capacity 10Gi < template 20Gi"}
		})},
	}, {
		name: "node resize pending (allocated resource status): waits for a remount",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi")}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "10Gi", allocated(corev1.PersistentVolumeClaimNodeResizePending))},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.Capacity, v.Compatible, v.NodeResizePending = "10Gi", false, true
			v.Reasons = []string{"capacity 10Gi < template 20Gi", "the volume is expanded; its file system grows when it is mounted again (FileSystemResizePending)"}
		})},
	}, {
		name: "node resize pending (condition only), a false condition is not",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi")}, replicas(2)),
		pvcs: []corev1.PersistentVolumeClaim{
			pvc("data-web-0", "20Gi", "10Gi", condition(corev1.PersistentVolumeClaimFileSystemResizePending, corev1.ConditionTrue, "")),
			pvc("data-web-1", "20Gi", "10Gi", condition(corev1.PersistentVolumeClaimFileSystemResizePending, corev1.ConditionFalse, "")),
		},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.Name, v.Capacity, v.Compatible, v.NodeResizePending = "data-web-0", "10Gi", false, true
			v.Reasons = []string{"capacity 10Gi < template 20Gi", "the volume is expanded; its file system grows when it is mounted again (FileSystemResizePending)"}
		}), with(compatible("data-web-1", "20Gi"), func(v *view) {
			v.Capacity, v.Compatible = "10Gi", false
			v.Reasons = []string{"capacity 10Gi < template 20Gi"}
		})},
	}, {
		name: "a failed node resize is a failure, not a pending one",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi")}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "10Gi",
			condition(corev1.PersistentVolumeClaimFileSystemResizePending, corev1.ConditionTrue, ""),
			condition(corev1.PersistentVolumeClaimNodeResizeError, corev1.ConditionTrue, "mount failed"))},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.Capacity, v.Compatible = "10Gi", false
			v.ResizeError = "NodeResizeError: mount failed"
			v.Reasons = []string{"capacity 10Gi < template 20Gi", "resize failed: NodeResizeError: mount failed"}
		})},
	}, {
		name: "infeasible VAC change surfaced",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi", vac("gold"))}),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi", vac("gold"), modifyStatus("gold", corev1.PersistentVolumeClaimModifyVolumeInfeasible))},
		want: []view{with(compatible("data-web-0", "20Gi"), func(v *view) {
			v.VACFrom, v.VACTo, v.Compatible = "gold", "gold", false
			v.ModifyError = `modifyVolumeStatus is Infeasible for class "gold"`
			v.Reasons = []string{`current volume attributes class (unset), template "gold"`,
				`volume attributes class change failed: modifyVolumeStatus is Infeasible for class "gold"`}
		})},
	}, {
		name: "missing PVC, and a PVC of another namespace is not it",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi")}, replicas(2)),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi"), pvc("data-web-1", "20Gi", "20Gi", namespace("other"))},
		want: []view{compatible("data-web-0", "20Gi"), {
			Name: "data-web-1", Missing: true, From: "0", To: "20Gi", Capacity: "0", VACFrom: "<nil>", VACTo: "<nil>",
			Reasons: []string{"PVC not created yet"},
		}},
	}, {
		name: "ordinals.start shifts claim names; claims sorted by template then ordinal",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi"), tmpl("logs", "5Gi")}, replicas(2), start(3)),
		pvcs: []corev1.PersistentVolumeClaim{
			pvc("logs-web-4", "5Gi", "5Gi"), pvc("data-web-4", "20Gi", "20Gi"),
			pvc("logs-web-3", "5Gi", "5Gi"), pvc("data-web-3", "20Gi", "20Gi"),
			pvc("data-web-0", "1Gi", "1Gi"), // out of range: not a claim
		},
		want: []view{compatible("data-web-3", "20Gi"), compatible("data-web-4", "20Gi"), compatible("logs-web-3", "5Gi"), compatible("logs-web-4", "5Gi")},
	}, {
		name: "zero replicas: no claims",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi")}, replicas(0)),
		pvcs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi")},
		want: []view{},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Compute(Input{Desired: tc.sts, PVCs: tc.pvcs})
			if err != nil {
				t.Fatalf("Compute: %v", err)
			}
			got := make([]view, 0, len(res.Claims))
			for _, c := range res.Claims {
				got = append(got, viewOf(c))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("claims:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestComputeTemplateChanges(t *testing.T) {
	data, logs := tmpl("data", "20Gi"), tmpl("logs", "20Gi")
	cases := []struct {
		name             string
		sts              *appsv1.StatefulSet
		live             []corev1.PersistentVolumeClaim
		pvcs             []corev1.PersistentVolumeClaim
		added, removed   []string
		missingTemplates []string // templates whose claims must be reported Missing
	}{{
		name:             "live templates given: names compared both ways",
		sts:              statefulSet([]corev1.PersistentVolumeClaim{data, tmpl("wal", "1Gi"), tmpl("cache", "1Gi")}),
		live:             []corev1.PersistentVolumeClaim{tmpl("old", "1Gi"), data},
		pvcs:             []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi"), pvc("old-web-0", "1Gi", "1Gi")},
		added:            []string{"cache", "wal"},
		removed:          []string{"old"},
		missingTemplates: []string{"wal", "cache"},
	}, {
		name:             "live templates given and equal: PVC names are not consulted",
		sts:              statefulSet([]corev1.PersistentVolumeClaim{data, logs}),
		live:             []corev1.PersistentVolumeClaim{data, logs},
		pvcs:             []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi"), pvc("old-web-0", "1Gi", "1Gi")},
		missingTemplates: []string{"logs"},
	}, {
		name: "removed template inferred from selected PVCs named like claims",
		sts:  statefulSet([]corev1.PersistentVolumeClaim{data}, replicas(1)),
		pvcs: []corev1.PersistentVolumeClaim{
			pvc("data-web-0", "20Gi", "20Gi"),
			pvc("old-web-7", "1Gi", "1Gi"),                             // retained from a scaled-down replica
			pvc("my-old-web-0", "1Gi", "1Gi"),                          // template names may contain dashes
			pvc("stray-web-0", "1Gi", "1Gi", withLabels("app", "api")), // not selected by the StatefulSet
			pvc("x-web-01", "1Gi", "1Gi"),                              // not an ordinal the controller prints
			pvc("x-web-a", "1Gi", "1Gi"),                               // not an ordinal at all
			pvc("web-0", "1Gi", "1Gi"),                                 // no template part
			pvc("x-api-0", "1Gi", "1Gi"),                               // another StatefulSet's name
			pvc("other-web-0", "1Gi", "1Gi", namespace("elsewhere")),
		},
		removed: []string{"my-old", "old"},
	}, {
		name:             "added template inferred: no claim of it exists while a Pod does",
		sts:              statefulSet([]corev1.PersistentVolumeClaim{data, logs, tmpl("wal", "1Gi")}, replicas(2), podsCounted(1)),
		pvcs:             []corev1.PersistentVolumeClaim{pvc("data-web-0", "20Gi", "20Gi"), pvc("wal-web-1", "1Gi", "1Gi")},
		added:            []string{"logs"},
		missingTemplates: []string{"data", "logs", "wal"},
	}, {
		name:             "new StatefulSet without any PVC: nothing added",
		sts:              statefulSet([]corev1.PersistentVolumeClaim{data, logs}, replicas(2)),
		missingTemplates: []string{"data", "logs"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Compute(Input{Desired: tc.sts, LiveTemplates: tc.live, PVCs: tc.pvcs})
			if err != nil {
				t.Fatalf("Compute: %v", err)
			}
			if !reflect.DeepEqual(res.TemplatesAdded, tc.added) {
				t.Errorf("TemplatesAdded = %q, want %q", res.TemplatesAdded, tc.added)
			}
			if !reflect.DeepEqual(res.TemplatesRemoved, tc.removed) {
				t.Errorf("TemplatesRemoved = %q, want %q", res.TemplatesRemoved, tc.removed)
			}
			var missing []string
			for _, c := range res.Claims {
				if c.Missing && (len(missing) == 0 || missing[len(missing)-1] != c.Template) {
					missing = append(missing, c.Template)
				}
			}
			if !reflect.DeepEqual(missing, tc.missingTemplates) {
				t.Errorf("templates with missing claims = %q, want %q", missing, tc.missingTemplates)
			}
		})
	}
}

// Issue 32, item 1: with the live StatefulSet as the desired one, a template
// is added only where a Pod runs without its claim, as the status counts
// Pods. The StatefulSet controller creates an ordinal's claims one after
// the other and its Pod only after all of them, so a claim missing before
// the Pod is one still being created, not a template change.
func TestComputeTemplatesAddedBesidePods(t *testing.T) {
	data, logs := tmpl("data", "1Gi"), tmpl("logs", "1Gi")
	both := []corev1.PersistentVolumeClaim{data, logs}
	claims := func(names ...string) []corev1.PersistentVolumeClaim {
		out := make([]corev1.PersistentVolumeClaim, len(names))
		for i, n := range names {
			out[i] = pvc(n, "1Gi", "1Gi")
		}
		return out
	}
	rolling := func(current, updated int32) stsMut {
		return func(s *appsv1.StatefulSet) {
			s.Status.CurrentReplicas, s.Status.UpdatedReplicas = current, updated
			s.Status.CurrentRevision, s.Status.UpdateRevision = "web-1", "web-2"
		}
	}
	cases := []struct {
		name  string
		sts   *appsv1.StatefulSet
		live  []corev1.PersistentVolumeClaim
		pvcs  []corev1.PersistentVolumeClaim
		added []string
	}{{
		name: "new: the first template's claim exists, the second's not yet, no Pod counted",
		sts:  statefulSet(both, replicas(2)),
		pvcs: claims("data-web-0"),
	}, {
		name: "new: Pod 0 counted with both claims, ordinal 1's claims being created",
		sts:  statefulSet(both, replicas(2), podsCounted(1)),
		pvcs: claims("data-web-0", "logs-web-0", "data-web-1"),
	}, {
		name: "only Pods being deleted (in status.replicas, not in current or updated): none counted",
		sts:  statefulSet(both, replicas(2), func(s *appsv1.StatefulSet) { s.Status.Replicas = 2 }),
		pvcs: claims("data-web-0"),
	}, {
		name:  "a Pod counted without any claim of a template: added",
		sts:   statefulSet(both, replicas(2), podsCounted(1)),
		pvcs:  claims("data-web-0"),
		added: []string{"logs"},
	}, {
		name:  "re-created with a template: both Pods counted, the controller created the new claim of Pod 0 only",
		sts:   statefulSet(both, replicas(2), podsCounted(2)),
		pvcs:  claims("data-web-0", "data-web-1", "logs-web-0"),
		added: []string{"logs"},
	}, {
		name:  "re-created with its first template: Pods without any claim",
		sts:   statefulSet([]corev1.PersistentVolumeClaim{data}, replicas(2), podsCounted(2)),
		added: []string{"data"},
	}, {
		name:  "a rolling update: the Pods of both revisions count",
		sts:   statefulSet(both, replicas(2), rolling(1, 1)),
		pvcs:  claims("data-web-0", "data-web-1", "logs-web-1"),
		added: []string{"logs"},
	}, {
		name: "one revision: its Pods count once, not twice",
		sts:  statefulSet(both, replicas(3), podsCounted(2)),
		pvcs: claims("data-web-0", "data-web-1", "logs-web-0", "logs-web-1", "data-web-2"),
	}, {
		name: "scaled down: the Pods beyond the replicas, whose claims go with them, do not count",
		sts:  statefulSet(both, replicas(1), podsCounted(3)),
		pvcs: claims("data-web-0", "logs-web-0", "logs-web-1", "logs-web-2"),
	}, {
		name: "a new ordinals.start: the Pods counted are those of the old ordinals, with their claims",
		sts:  statefulSet(both, replicas(2), start(2), podsCounted(2)),
		pvcs: claims("data-web-0", "data-web-1", "logs-web-0", "logs-web-1", "data-web-2"),
	}, {
		name: "scaled to zero",
		sts:  statefulSet(both, replicas(0), podsCounted(2)),
		pvcs: claims("data-web-0", "data-web-1"),
	}, {
		name: "claims of another StatefulSet or namespace do not count",
		sts:  statefulSet(both, replicas(1), podsCounted(1)),
		pvcs: append(claims("data-web-0", "logs-api-0", "logs-web-1x"),
			pvc("logs-web-0", "1Gi", "1Gi", namespace("elsewhere"))),
		added: []string{"logs"},
	}, {
		name:  "GitOps: the live templates decide, whatever the status counts",
		sts:   statefulSet(both, replicas(2)),
		live:  []corev1.PersistentVolumeClaim{data},
		pvcs:  claims("data-web-0", "data-web-1"),
		added: []string{"logs"},
	}, {
		name: "GitOps: the same templates add none, whatever claims are missing",
		sts:  statefulSet(both, replicas(2), podsCounted(2)),
		live: both,
		pvcs: claims("data-web-0", "data-web-1"),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Compute(Input{Desired: tc.sts, LiveTemplates: tc.live, PVCs: tc.pvcs})
			if err != nil {
				t.Fatalf("Compute: %v", err)
			}
			if !reflect.DeepEqual(res.TemplatesAdded, tc.added) {
				t.Errorf("TemplatesAdded = %q, want %q", res.TemplatesAdded, tc.added)
			}
		})
	}
}

func TestComputeErrors(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		want []string // substrings: the object and the field
	}{{
		name: "nil desired",
		in:   Input{},
		want: []string{"Input.Desired is nil"},
	}, {
		name: "template without a name",
		in:   Input{Desired: statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "1Gi"), tmpl("", "1Gi")})},
		want: []string{"db/web", "spec.volumeClaimTemplates[1]", "metadata.name"},
	}, {
		name: "template without a storage request",
		in:   Input{Desired: statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "")})},
		want: []string{"db/web", "spec.volumeClaimTemplates[0] (data)", "spec.resources.requests.storage"},
	}, {
		name: "duplicate template names",
		in:   Input{Desired: statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "1Gi"), tmpl("data", "2Gi")})},
		want: []string{"db/web", "spec.volumeClaimTemplates[1]", `duplicate name "data"`},
	}, {
		name: "live template without a name",
		in: Input{Desired: statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "1Gi")}),
			LiveTemplates: []corev1.PersistentVolumeClaim{tmpl("", "")}},
		want: []string{"db/web", "live spec.volumeClaimTemplates[0]", "metadata.name"},
	}, {
		name: "negative replicas",
		in:   Input{Desired: statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "1Gi")}, replicas(-1))},
		want: []string{"db/web", "spec.replicas is -1"},
	}, {
		name: "negative ordinals start",
		in:   Input{Desired: statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "1Gi")}, start(-2))},
		want: []string{"db/web", "spec.ordinals.start is -2"},
	}, {
		name: "invalid selector",
		in: Input{Desired: statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "1Gi")}, func(s *appsv1.StatefulSet) {
			s.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}
		})},
		want: []string{"db/web", "spec.selector"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compute(tc.in)
			if err == nil {
				t.Fatal("Compute succeeded, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestIsTrackingKey(t *testing.T) {
	cases := map[string]bool{
		"app.kubernetes.io/instance":                true,
		"argocd.argoproj.io/tracking-id":            true,
		"kustomize.toolkit.fluxcd.io/name":          true,
		"helm.toolkit.fluxcd.io/name":               true,
		"meta.helm.sh/release-name":                 true,
		"helm.sh/chart":                             true, // Helm bookkeeping, for every source
		"app.kubernetes.io/name":                    false,
		"argocd.argoproj.io":                        false, // the prefix needs its slash
		"example.com/kustomize.toolkit.fluxcd.io/x": false,
		"tier": false,
	}
	for k, want := range cases {
		if got := IsTrackingKey(k); got != want {
			t.Errorf("IsTrackingKey(%q) = %v, want %v", k, got, want)
		}
	}
}

// Results must not alias the caller's objects: the controller keeps them
// while it mutates fresh copies of the PVCs.
func TestComputeDoesNotAliasInput(t *testing.T) {
	sts := statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "20Gi", class("standard"), vac("gold"))})
	pvcs := []corev1.PersistentVolumeClaim{pvc("data-web-0", "10Gi", "10Gi", vac("silver"), currentVAC("silver"))}
	res, err := Compute(Input{Desired: sts, PVCs: pvcs})
	if err != nil {
		t.Fatal(err)
	}
	*sts.Spec.VolumeClaimTemplates[0].Spec.VolumeAttributesClassName = "changed"
	*pvcs[0].Spec.VolumeAttributesClassName = "changed"
	*pvcs[0].Status.CurrentVolumeAttributesClassName = "changed"
	c := res.Claims[0]
	if *c.VACTo != "gold" || *c.VACFrom != "silver" || *c.CurrentVAC != "silver" {
		t.Errorf("VACs follow the input: to %q from %q current %q", *c.VACTo, *c.VACFrom, *c.CurrentVAC)
	}
}

// Labels a build injects into every template (kustomize commonLabels) are
// never asked of a claim; other template labels still are.
func TestComputeIgnoreLabels(t *testing.T) {
	sts := statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "10Gi", class("standard"), withLabels("env", "prod", "tier", "db"))})
	pvcs := []corev1.PersistentVolumeClaim{pvc("data-web-0", "10Gi", "10Gi")}
	res, err := Compute(Input{Desired: sts, PVCs: pvcs, IgnoreLabels: []string{"env"}})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Claims[0]
	if len(c.Labels) != 1 || c.Labels["tier"] != "db" {
		t.Errorf("labels to patch = %v, want only tier=db", c.Labels)
	}
	res, err = Compute(Input{Desired: sts, PVCs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "10Gi", "10Gi", withLabels("tier", "db"))}, IgnoreLabels: []string{"env"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Claims[0].Compatible {
		t.Errorf("claim with every label but the ignored one is not compatible: %v", res.Claims[0].Reasons)
	}
}

func TestTemplatesEqual(t *testing.T) {
	fs := corev1.PersistentVolumeFilesystem
	block := corev1.PersistentVolumeBlock
	// What the API server returns for a template written without these fields.
	live := tmpl("data", "10Gi", func(p *corev1.PersistentVolumeClaim) {
		p.APIVersion, p.Kind = "v1", "PersistentVolumeClaim"
		p.Spec.VolumeMode = &fs
		p.Status.Phase = corev1.ClaimPending
		p.Labels = map[string]string{}
	})
	cases := []struct {
		name    string
		desired corev1.PersistentVolumeClaim
		want    bool
	}{
		{"the manifest the live object came from", tmpl("data", "10Gi"), true},
		{"same size written differently", tmpl("data", "10240Mi"), true},
		{"bigger", tmpl("data", "15Gi"), false},
		{"another name", tmpl("logs", "10Gi"), false},
		{"a label", tmpl("data", "10Gi", withLabels("tier", "db")), false},
		{"block mode", tmpl("data", "10Gi", func(p *corev1.PersistentVolumeClaim) { p.Spec.VolumeMode = &block }), false},
		{"a class", tmpl("data", "10Gi", class("fast")), false},
	}
	for _, c := range cases {
		if got := TemplatesEqual([]corev1.PersistentVolumeClaim{live}, []corev1.PersistentVolumeClaim{c.desired}); got != c.want {
			t.Errorf("%s: TemplatesEqual = %v, want %v", c.name, got, c.want)
		}
	}
	if TemplatesEqual([]corev1.PersistentVolumeClaim{live}, nil) {
		t.Error("a removed template compares equal")
	}
}

// A proposal that adds the first template to a StatefulSet without any says so.
func TestComputeTemplateAddedToNone(t *testing.T) {
	desired := statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "1Gi")})
	live := statefulSet(nil)
	res, err := Compute(Input{Desired: desired, LiveTemplates: LiveTemplatesOf(live)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.TemplatesAdded) != 1 || res.TemplatesAdded[0] != "data" {
		t.Errorf("TemplatesAdded = %v, want [data]", res.TemplatesAdded)
	}
}
