package rollout_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/commitstatus"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/storagesim"
)

// volumeAttributesClass creates a cluster-scoped class of the simulator's
// driver; tests name it after their namespace so that none shares it.
func volumeAttributesClass(t *testing.T, c client.Client, name string) {
	t.Helper()
	vac := &storagev1.VolumeAttributesClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		DriverName: storagesim.DefaultProvisioner,
		Parameters: map[string]string{"iops": "9000"},
	}
	if err := c.Create(context.Background(), vac); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), vac) })
}

// keepsClaimVAC asks the API server, in a dry run, whether it keeps a
// claim's volumeAttributesClassName: servers without the
// VolumeAttributesClass gate (off by default before 1.34) drop it. The test
// reads the server's behaviour, claimwarden its discovery: they must agree.
func keepsClaimVAC(t *testing.T, c client.Client, ns string) bool {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vac-probe"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:               []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:                 corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			VolumeAttributesClassName: ptr.To("probe"),
		},
	}
	if err := c.Create(context.Background(), pvc, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	return pvc.Spec.VolumeAttributesClassName != nil
}

// vacNotApplied is what claimwarden says of claims whose template names a
// class where the server serves none.
const vacNotApplied = "not applied: this API server serves no VolumeAttributesClasses"

// reportedNotApplied waits, on a server without VolumeAttributesClasses,
// for the rollout to be Ready with every claim's class reported as not
// applied, never patched nor waited for.
func reportedNotApplied(t *testing.T, c client.Client, key client.ObjectKey, class string, claims ...string) {
	t.Helper()
	t.Logf("compat: the server serves no VolumeAttributesClasses: a template's class is reported as not applied, never patched nor waited for")
	vcr := waitRollout(t, c, key, "Ready, the class reported as not applied", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Compatible == int32(len(claims)) && strings.Contains(condition(v, meta.ReadyCondition), class+" not applied to")
	})
	for i, name := range claims {
		if msg := claimStatus(vcr, name).Message; !strings.Contains(msg, "volume attributes class "+class+" "+vacNotApplied) {
			t.Errorf("%s: %q, want it to say the class is not applied and why", name, msg)
		}
		if vac := claim(t, c, key.Namespace, name).Spec.VolumeAttributesClassName; vac != nil {
			t.Errorf("claim %d %s: class %s set on a server that drops it", i, name, *vac)
		}
	}
	if patched := events(t, c, key.Namespace, v1alpha1.ReasonClaimPatched); len(patched) != 0 {
		t.Errorf("patch events %v, want none: nothing a patch could change", notes(patched))
	}
}

func setTemplateVAC(name string) func(*appsv1.StatefulSet) {
	return func(s *appsv1.StatefulSet) {
		s.Spec.VolumeClaimTemplates[0].Spec.VolumeAttributesClassName = ptr.To(name)
	}
}

// The claim is patched at once, but stays Resizing, not Compatible, while the
// storage has not applied the class (here: until the class exists); once
// status.currentVolumeAttributesClassName matches, it is Compatible.
func TestVolumeAttributesClassChangeIsCompatibleOnlyOnceApplied(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	gold := ns + "-gold"
	sts := fixtures.StatefulSet(ns, "tuned", 2, classExpandable, "1Gi")
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)

	if err := fixtures.ReplaceTemplates(context.Background(), c, key, setTemplateVAC(gold)); err != nil {
		t.Fatal(err)
	}
	if !keepsClaimVAC(t, c, ns) {
		reportedNotApplied(t, c, key, gold, "data-tuned-0", "data-tuned-1")
		return
	}
	vcr := waitRollout(t, c, key, "waiting for the class on data-tuned-1", func(v *v1alpha1.VolumeClaimRollout) bool {
		return v.Status.Claims[1].Phase == v1alpha1.ClaimResizing
	})
	if msg := vcr.Status.Claims[1].Message; !strings.Contains(msg, "current volume attributes class") || !strings.Contains(msg, gold) {
		t.Errorf("data-tuned-1: %q, want it to wait for the current class %s", msg, gold)
	}
	if vcr.Status.Counts.Compatible != 0 || readyTrue(vcr) {
		t.Errorf("%s: no claim is on the template's class yet, none may count as compatible", describe(vcr))
	}
	pvc := claim(t, c, ns, "data-tuned-1")
	if ptr.Deref(pvc.Spec.VolumeAttributesClassName, "") != gold || pvc.Status.CurrentVolumeAttributesClassName != nil {
		t.Errorf("data-tuned-1: spec %v current %v, want spec %s and nothing applied yet",
			pvc.Spec.VolumeAttributesClassName, pvc.Status.CurrentVolumeAttributesClassName, gold)
	}
	if pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != classExpandable {
		t.Errorf("data-tuned-1 storage class %v changed", pvc.Spec.StorageClassName)
	}
	if vac := claim(t, c, ns, "data-tuned-0").Spec.VolumeAttributesClassName; vac != nil {
		t.Errorf("data-tuned-0 patched to %s while data-tuned-1 waits for its storage", *vac)
	}

	volumeAttributesClass(t, c, gold)
	waitRollout(t, c, key, "Ready on the new class", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Compatible == 2
	})
	for _, name := range []string{"data-tuned-0", "data-tuned-1"} {
		pvc := claim(t, c, ns, name)
		if ptr.Deref(pvc.Status.CurrentVolumeAttributesClassName, "") != gold || pvc.Status.ModifyVolumeStatus != nil {
			t.Errorf("%s: current %v, modifyVolumeStatus %+v; Compatible before the class was applied",
				name, pvc.Status.CurrentVolumeAttributesClassName, pvc.Status.ModifyVolumeStatus)
		}
	}
	patched := events(t, c, ns, v1alpha1.ReasonClaimPatched)
	if len(patched) != 2 || !strings.Contains(patched[0].Note, "volumeAttributesClassName → "+gold) {
		t.Errorf("patch events %v, want two naming the class", notes(patched))
	}
}

// An infeasible modify fails the claim with the driver's message, stalls the
// rollout VolumeModifyFailed, fails the commit, and recovers once the
// storage accepts the class. Where the server serves no classes, no modify
// is ever asked for: the rollout is Ready, the class reported.
func TestInfeasibleVolumeAttributesClassChangeFails(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	gold := ns + "-gold"
	supported := keepsClaimVAC(t, c, ns)
	if supported {
		volumeAttributesClass(t, c, gold)
	}
	sts := fixtures.StatefulSet(ns, "tuned", 1, classExpandable, "1Gi")
	live, key := createLive(t, c, sts)
	const driverSays = "simulated: 9000 iops exceed this pool's limit"
	sim.FailModify(ns, "data-tuned-0", driverSays)
	t.Cleanup(func() { sim.ClearFailure(ns, "data-tuned-0") })

	var reapplied atomic.Int32
	p, sha := gitProposal(live, "1Gi", &reapplied)
	setTemplateVAC(gold)(p.StatefulSet)
	proposals.Set(context.Background(), p)
	if !supported {
		reportedNotApplied(t, c, key, gold, "data-tuned-0")
		waitStatus(t, sha, "claimwarden/"+ns+"/tuned", func(s commitstatus.Status) bool { return s.State == commitstatus.Success })
		return
	}

	vcr := waitRollout(t, c, key, "Stalled by the infeasible class", stalled)
	msg := condition(vcr, meta.StalledCondition)
	if !strings.HasPrefix(msg, v1alpha1.ReasonModifyFailed) || !strings.Contains(msg, driverSays) {
		t.Errorf("Stalled: %s, want %s with the driver's message", msg, v1alpha1.ReasonModifyFailed)
	}
	if cl := vcr.Status.Claims[0]; cl.Phase != v1alpha1.ClaimFailed || !strings.Contains(cl.Message, driverSays) {
		t.Errorf("claim %+v, want Failed with the driver's message", cl)
	}
	if cur := claim(t, c, ns, "data-tuned-0").Status.CurrentVolumeAttributesClassName; cur != nil {
		t.Errorf("current class %s applied despite the failure", *cur)
	}
	ctxName := "claimwarden/" + ns + "/tuned"
	waitStatus(t, sha, ctxName, func(s commitstatus.Status) bool { return s.State == commitstatus.Error })

	sim.ClearFailure(ns, "data-tuned-0")
	waitRollout(t, c, key, "Ready once the storage accepts the class", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Compatible == 1
	})
	waitStatus(t, sha, ctxName, func(s commitstatus.Status) bool { return s.State == commitstatus.Success })
}

func notes(evs []eventsv1.Event) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.Note)
	}
	return out
}
