package invariants_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/invariants"
)

const expandable = "expandable"

// run gives a test a namespace and a recorder started on it.
func run(t *testing.T) (context.Context, kubernetes.Interface, string, *invariants.Recorder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	_, err := cs.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: expandable}, Provisioner: "sim.claimwarden.dev", AllowVolumeExpansion: ptr.To(true),
	}, metav1.CreateOptions{})
	if err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "inv-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := invariants.Start(ctx, env.Config, invariants.Options{Namespaces: []string{ns.Name}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rec.Stop)
	return ctx, cs, ns.Name, rec
}

// waitRules polls until the recorder has flagged exactly want (in any
// order; rules only the end can tell are left to Check), then checks that
// Check reports want.
func waitRules(ctx context.Context, t *testing.T, rec *invariants.Recorder, want ...invariants.Rule) {
	t.Helper()
	slices.Sort(want)
	during := slices.DeleteFunc(slices.Clone(want), func(r invariants.Rule) bool {
		return r == invariants.StatefulSetGone || r == invariants.CommitStatuses
	})
	var got []invariants.Rule
	for {
		got = rulesOf(rec.Violations())
		if slices.Equal(got, during) || ctx.Err() != nil {
			break
		}
		time.Sleep(fixtures.Poll)
	}
	err := rec.Check(ctx)
	var ie *invariants.Error
	switch {
	case len(want) == 0 && err != nil:
		t.Fatalf("Check: %v, want no violation", err)
	case len(want) == 0:
		return
	case !errors.As(err, &ie):
		t.Fatalf("Check: %v, want violations of %v", err, want)
	}
	if got = rulesOf(ie.Violations); !slices.Equal(got, want) {
		t.Fatalf("violated %v, want %v:\n%v", got, want, err)
	}
	t.Logf("as wanted: %v", err)
}

func rulesOf(vs []invariants.Violation) []invariants.Rule {
	var out []invariants.Rule
	for _, v := range vs {
		if !slices.Contains(out, v.Rule) {
			out = append(out, v.Rule)
		}
	}
	slices.Sort(out)
	return out
}

// boundClaim creates a claim of size, Bound with that capacity as a
// provisioner would leave it (only bound claims may be resized).
func boundClaim(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name, size string) *corev1.PersistentVolumeClaim {
	t.Helper()
	pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To(expandable),
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pvc.Status = corev1.PersistentVolumeClaimStatus{
		Phase: corev1.ClaimBound, AccessModes: pvc.Spec.AccessModes,
		Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
	}
	if pvc, err = cs.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return pvc
}

// setRequest writes the claim's request as manager, annotated as given.
func setRequest(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name, manager, size string, annotations map[string]string) {
	t.Helper()
	ac := corev1ac.PersistentVolumeClaim(name, ns).WithSpec(corev1ac.PersistentVolumeClaimSpec().
		WithResources(corev1ac.VolumeResourceRequirements().WithRequests(corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)})))
	if annotations != nil {
		ac.WithAnnotations(annotations)
	}
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Apply(ctx, ac, metav1.ApplyOptions{FieldManager: manager, Force: true}); err != nil {
		t.Fatalf("%s sets %s to %s: %v", manager, name, size, err)
	}
}

func TestBaselineAndGrowthAreNoViolation(t *testing.T) {
	ctx, cs, ns, rec := run(t)
	boundClaim(ctx, t, cs, ns, "data-web-0", "1Gi")
	setRequest(ctx, t, cs, ns, "data-web-0", v1alpha1.ControllerName, "2Gi", nil)
	for rec.Counts().ClaimwardenPatches < 1 && ctx.Err() == nil {
		time.Sleep(fixtures.Poll)
	}
	rec.CommitStatus("abc", "claimwarden/x", "pending")
	rec.CommitStatus("abc", "claimwarden/x", "success")
	waitRules(ctx, t, rec)
}

func TestLoweredRequestIsFlagged(t *testing.T) {
	ctx, cs, ns, rec := run(t)
	boundClaim(ctx, t, cs, ns, "data-web-0", "1Gi")
	setRequest(ctx, t, cs, ns, "data-web-0", "kubectl", "3Gi", nil)
	setRequest(ctx, t, cs, ns, "data-web-0", "kubectl", "2Gi", nil)
	waitRules(ctx, t, rec, invariants.RequestLowered)
}

// A recovery from a failed expansion lowers the request and says so; a
// second patch to the size whose expansion failed is one patch too many.
func TestRecoveryIsAllowedButARepeatedPatchIsFlagged(t *testing.T) {
	ctx, cs, ns, rec := run(t)
	boundClaim(ctx, t, cs, ns, "data-web-0", "1Gi")
	setRequest(ctx, t, cs, ns, "data-web-0", v1alpha1.ControllerName, "3Gi", nil)
	setRequest(ctx, t, cs, ns, "data-web-0", v1alpha1.ControllerName, "2Gi", map[string]string{v1alpha1.RecoveredFromAnnotation: "3Gi"})
	for rec.Counts().ClaimwardenPatches < 2 && ctx.Err() == nil {
		time.Sleep(fixtures.Poll)
	}
	if vs := rec.Violations(); len(vs) != 0 {
		t.Fatalf("a documented recovery was flagged: %v", vs)
	}
	setRequest(ctx, t, cs, ns, "data-web-0", v1alpha1.ControllerName, "3Gi", nil)
	waitRules(ctx, t, rec, invariants.RepeatedPatch)
}

func TestDeletedClaimIsFlagged(t *testing.T) {
	ctx, cs, ns, rec := run(t)
	boundClaim(ctx, t, cs, ns, "data-web-0", "1Gi")
	if err := cs.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "data-web-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRules(ctx, t, rec, invariants.ClaimDeleted)
}

func statefulSetPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{appsv1.StatefulSetPodNameLabel: name}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "registry.example/db:1"}}},
	}
}

// A Pod the test restarts on purpose is not flagged; another one is.
func TestDeletedPodIsFlaggedUnlessIntended(t *testing.T) {
	ctx, cs, ns, rec := run(t)
	for _, name := range []string{"web-0", "web-1"} {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, statefulSetPod(ns, name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for rec.Counts().PodEvents < 2 && ctx.Err() == nil {
		time.Sleep(fixtures.Poll)
	}
	rec.IntendRestart(ns, "web-0")
	for _, name := range []string{"web-0", "web-1"} {
		if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitRules(ctx, t, rec, invariants.PodRestarted)
	for _, v := range rec.Violations() {
		if v.Object != "Pod "+ns+"/web-1" {
			t.Errorf("flagged %s, which the test restarted on purpose", v)
		}
	}
}

func TestContainerRestartIsFlagged(t *testing.T) {
	ctx, cs, ns, rec := run(t)
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, statefulSetPod(ns, "web-0"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "db", Image: "registry.example/db:1", RestartCount: 1}}
	if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRules(ctx, t, rec, invariants.PodRestarted)
}

func TestLostRevisionIsFlagged(t *testing.T) {
	ctx, cs, ns, rec := run(t)
	cr := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "web-5d8f7c"}, Revision: 1, Data: runtime.RawExtension{Raw: []byte(`{}`)}}
	if _, err := cs.AppsV1().ControllerRevisions(ns).Create(ctx, cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.AppsV1().ControllerRevisions(ns).Delete(ctx, cr.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRules(ctx, t, rec, invariants.RevisionLost)
}

// A StatefulSet may be absent for a while (a re-create), not at the end.
func TestAbsentStatefulSetIsFlagged(t *testing.T) {
	ctx, cs, ns, rec := run(t)
	sts := fixtures.StatefulSet(ns, "web", 1, expandable, "1Gi")
	if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for rec.Counts().SetEvents < 1 && ctx.Err() == nil {
		time.Sleep(fixtures.Poll)
	}
	if err := cs.AppsV1().StatefulSets(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRules(ctx, t, rec, invariants.StatefulSetGone)
}

func TestCommitWithoutExactlyOneFinalStatusIsFlagged(t *testing.T) {
	ctx, _, _, rec := run(t)
	rec.CommitStatus("aaa", "claimwarden/ns/web", "pending") // never finished
	rec.CommitStatus("bbb", "claimwarden/ns/web", "pending")
	rec.CommitStatus("bbb", "claimwarden/ns/web", "success")
	rec.CommitStatus("bbb", "claimwarden/ns/web", "success") // said twice
	rec.CommitStatus("ccc", "claimwarden/ns/web", "failure") // fine
	waitRules(ctx, t, rec, invariants.CommitStatuses)
	var ie *invariants.Error
	if err := rec.Check(ctx); !errors.As(err, &ie) || len(ie.Violations) != 2 {
		t.Errorf("Check: %v, want two commits flagged (aaa, bbb)", err)
	}
}
