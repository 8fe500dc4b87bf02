package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestAuditLogHoldsTheWritesThatTookEffect: of the requests to a claim, the
// audit log read with IsWrite holds exactly the create and the patch that
// changed it, in order and with the client's user agent; a dry run, a
// refused patch, a status patch and a write to a ConfigMap are not there.
func TestAuditLogHoldsTheWritesThatTookEffect(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cfg := rest.CopyConfig(env.Config)
	cfg.UserAgent = "audit-test/1"
	c := kubernetes.NewForConfigOrDie(cfg)
	ns := createNamespace(ctx, t, c, "audit")
	claims := c.CoreV1().PersistentVolumeClaims(ns)

	must(t, create(ctx, claims, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: resource.MustParse("1Gi"),
			}},
		},
	}))
	label := []byte(`{"metadata":{"labels":{"a":"b"}}}`)
	_, err := claims.Patch(ctx, "data", types.MergePatchType, label, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
	must(t, err)
	// An unbound claim's request cannot change: 422.
	if _, err := claims.Patch(ctx, "data", types.MergePatchType, []byte(`{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`), metav1.PatchOptions{}); err == nil {
		t.Fatal("the request of an unbound claim changed")
	}
	_, err = claims.Patch(ctx, "data", types.MergePatchType, []byte(`{"status":{"phase":"Lost"}}`), metav1.PatchOptions{}, "status")
	must(t, err)
	must(t, create(ctx, c.CoreV1().ConfigMaps(ns), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other"}}))
	_, err = claims.Patch(ctx, "data", types.MergePatchType, label, metav1.PatchOptions{})
	must(t, err)

	eventually(ctx, t, "the audit log holding the create and the patch", func() error {
		evs, err := env.AuditEvents(func(ev *auditv1.Event) bool {
			return IsWrite(ev) && ev.ObjectRef.Namespace == ns
		})
		if err != nil {
			return err
		}
		var got []string
		for _, ev := range evs {
			got = append(got, fmt.Sprintf("%s %s %s %s", ev.Verb, ev.ObjectRef.Resource, ev.ObjectRef.Name, ev.UserAgent))
		}
		want := []string{"create persistentvolumeclaims data audit-test/1", "patch persistentvolumeclaims data audit-test/1"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("writes %q, want %q", got, want)
		}
		return nil
	})
}
