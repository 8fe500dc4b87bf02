package plan

import (
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// recoveryClaim is claim o of template data, 2Gi, in a state of a recovery
// from a failed expansion to 10Gi on a 1Gi volume.
func recoveryClaim(o int32, state string) diff.ClaimChange {
	q := resource.MustParse
	c := diff.ClaimChange{
		Template: "data", Ordinal: o, Name: "data-web-" + strconv.Itoa(int(o)),
		TemplateRequest: q("2Gi"), RequestFrom: q("10Gi"), RequestTo: q("2Gi"), Capacity: q("1Gi"),
		ResizeError: "ControllerResizeError: out of space",
		Reasons:     []string{"capacity 1Gi < template 2Gi", "resize failed: ControllerResizeError: out of space"},
	}
	switch state {
	case "recovery": // the template lowers the request
		c.Recovery = true
	case "recovering": // lowered, the resizer not there yet
		c.Recovering, c.RequestFrom, c.RecoveredFrom = true, q("2Gi"), "10Gi"
	case "recovered":
		c.RequestFrom, c.Capacity, c.RecoveredFrom, c.ResizeError, c.Reasons, c.Compatible = q("2Gi"), q("2Gi"), "10Gi", "", nil, true
	case "failed": // a failure no recovery undoes: the template is the request
		c.RequestFrom = q("2Gi")
	case "grow":
		c.RequestFrom, c.Capacity, c.ResizeError = q("1Gi"), q("1Gi"), ""
		c.Reasons = []string{"capacity 1Gi < template 2Gi"}
	default:
		panic("unknown state " + state)
	}
	c.TemplateBytes, c.FromBytes, c.ToBytes = c.TemplateRequest.Value(), c.RequestFrom.Value(), c.RequestTo.Value()
	return c
}

func TestBuildRecovery(t *testing.T) {
	opts := Options{Strategy: v1alpha1.InPlace, MaxConcurrent: 1}
	t.Run("a recovery is patched, not Failed, and goes first", func(t *testing.T) {
		p := Build(claims(recoveryClaim(0, "grow"), recoveryClaim(1, "recovery")), opts)
		if len(p.Patch) != 1 || p.Patch[0].Name != "data-web-1" || p.Patch[0].RequestTo.String() != "2Gi" {
			t.Fatalf("patch %+v, want data-web-1 to 2Gi", p.Patch)
		}
		if s := p.Steps[1]; s.Phase != v1alpha1.ClaimPatching || !strings.Contains(s.Message, "storage 10Gi → 2Gi to recover from the failed expansion to 10Gi") {
			t.Errorf("recovery: %s %q", s.Phase, s.Message)
		}
		if s := p.Steps[0]; s.Phase != v1alpha1.ClaimPending || !strings.Contains(s.Message, "waiting for its turn") {
			t.Errorf("growth: %s %q, want waiting for its turn", s.Phase, s.Message)
		}
		if p.Blocked != "" {
			t.Errorf("Blocked %q, want none", p.Blocked)
		}
	})
	t.Run("a failure no recovery undoes still stops it", func(t *testing.T) {
		p := Build(claims(recoveryClaim(0, "failed"), recoveryClaim(1, "recovery")), opts)
		if len(p.Patch) != 0 {
			t.Fatalf("patched %+v while a claim failed", p.Patch)
		}
		if p.Steps[0].Phase != v1alpha1.ClaimFailed || p.Steps[1].Phase != v1alpha1.ClaimPending ||
			!strings.Contains(p.Steps[1].Message, "patches stopped by failed claims data-web-0") {
			t.Errorf("steps %+v", p.Steps)
		}
	})
	t.Run("a policy refusing the recovery leaves it Denied", func(t *testing.T) {
		p := Build(claims(recoveryClaim(0, "recovery")), Options{Strategy: v1alpha1.InPlace, PolicyDenied: map[string]string{"data-web-0": "increase-only: refused"}})
		if len(p.Patch) != 0 || p.Steps[0].Phase != v1alpha1.ClaimDenied {
			t.Fatalf("patch %+v, step %+v, want Denied and nothing patched", p.Patch, p.Steps[0])
		}
	})
	t.Run("a failed class change still fails a recovery", func(t *testing.T) {
		c := recoveryClaim(0, "recovery")
		c.ModifyError = "ModifyVolumeError: no such class"
		p := Build(claims(c), opts)
		if len(p.Patch) != 0 || p.Steps[0].Phase != v1alpha1.ClaimFailed || !strings.Contains(p.Steps[0].Message, "no such class") {
			t.Fatalf("patch %+v, step %+v, want Failed on the class change", p.Patch, p.Steps[0])
		}
	})
	t.Run("a lowered request the storage has not reached is Resizing and in flight", func(t *testing.T) {
		p := Build(claims(recoveryClaim(0, "grow"), recoveryClaim(1, "recovering")), opts)
		s := p.Steps[1]
		if s.Phase != v1alpha1.ClaimResizing || !strings.Contains(s.Message, "recovering from failed expansion to 10Gi: request lowered to 2Gi") {
			t.Errorf("recovering: %s %q", s.Phase, s.Message)
		}
		if len(p.Patch) != 0 || p.Blocked != "" {
			t.Errorf("patch %+v, blocked %q: want the growth to wait its turn, nothing blocked", p.Patch, p.Blocked)
		}
	})
	t.Run("a recovered claim says so, and so does the plan", func(t *testing.T) {
		p := Build(claims(recoveryClaim(0, "recovered"), recoveryClaim(1, "recovered")), opts)
		if !p.Done {
			t.Fatal("not Done")
		}
		if s := p.Steps[0]; !strings.Contains(s.Message, "compatible; recovered from failed expansion to 2Gi (the expansion to 10Gi had failed)") {
			t.Errorf("message %q", s.Message)
		}
		if want := "recovered from failed expansion to 2Gi: data-web-0, data-web-1"; p.Recovered != want {
			t.Errorf("Recovered %q, want %q", p.Recovered, want)
		}
	})
	t.Run("recoveries to different sizes are named by size", func(t *testing.T) {
		logs := recoveryClaim(2, "recovered")
		logs.Name, logs.Template, logs.RequestFrom = "logs-web-2", "logs", resource.MustParse("5Gi")
		p := Build(claims(recoveryClaim(0, "recovered"), recoveryClaim(1, "recovered"), logs), opts)
		if want := "recovered from failed expansion to 2Gi: data-web-0, data-web-1; to 5Gi: logs-web-2"; p.Recovered != want {
			t.Errorf("Recovered %q, want %q", p.Recovered, want)
		}
	})
	t.Run("no recovery, no note", func(t *testing.T) {
		if p := Build(claims(claim("data", 0, "compatible")), opts); p.Recovered != "" {
			t.Errorf("Recovered %q", p.Recovered)
		}
	})
}

// The policies are told that a smaller template is a recovery, with the
// capacity it stays above, so that increase-only can tell it from a shrink.
func TestQuestionsTellARecovery(t *testing.T) {
	q := resource.MustParse
	tmpl := corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q("2Gi")}}}}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: appsv1.StatefulSetSpec{VolumeClaimTemplates: []corev1.PersistentVolumeClaim{tmpl}}}
	pvc := corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "data-web-0"},
		Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q("10Gi")}}},
		Status: corev1.PersistentVolumeClaimStatus{Capacity: corev1.ResourceList{corev1.ResourceStorage: q("1Gi")},
			AllocatedResourceStatuses: map[corev1.ResourceName]corev1.ClaimResourceStatus{corev1.ResourceStorage: corev1.PersistentVolumeClaimControllerResizeInfeasible}}}
	res, err := diff.Compute(diff.Input{Desired: sts, PVCs: []corev1.PersistentVolumeClaim{pvc}})
	if err != nil {
		t.Fatal(err)
	}
	qs := Questions(sts, res, map[string]*corev1.PersistentVolumeClaim{pvc.Name: &pvc}, false)
	if len(qs) != 1 {
		t.Fatalf("%d questions, want 1", len(qs))
	}
	want := policies.QuantityChange{From: "10Gi", To: "2Gi", FromBytes: 10 << 30, ToBytes: 2 << 30, Capacity: "1Gi", CapacityBytes: 1 << 30, Recovery: true}
	if got := qs[0].Input.Change.Storage; got == nil || *got != want {
		t.Errorf("storage change %+v, want %+v", got, want)
	}
}
