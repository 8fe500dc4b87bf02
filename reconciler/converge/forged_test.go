package converge_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/converge"
)

// orphanDeleted creates the StatefulSet and orphan-deletes it, leaving the
// state a crash between our delete and our create leaves: the name free,
// the old UID gone. It returns the deleted object.
func orphanDeleted(ctx context.Context, t *testing.T, c client.Client, ns string) *appsv1.StatefulSet {
	t.Helper()
	live := manifest(ns, "1Gi")
	if err := c.Create(ctx, live); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, live, client.PropagationPolicy(metav1.DeletePropagationOrphan)); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, 30*time.Second, "orphan delete to finish", func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, key(ns), &appsv1.StatefulSet{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	return live
}

// Whoever can write the journal (VolumeClaimRollout status) but does not
// hold the key cannot make the controller create a StatefulSet: not another
// Pod template for the deleted one, not another name, not without a MAC or
// with a wrong one. Each is refused with ErrJournalRejected, nothing is
// created, and the record stays for a person to see. The genuine record is
// then accepted.
func TestForgedJournalIsNeverCreated(t *testing.T) {
	ctx := ctxFor(t)
	c, _ := cluster(t)
	ns := namespaceFor(ctx, t, c)
	deleted := orphanDeleted(ctx, t, c, ns)
	uid := string(deleted.UID)
	j := cmJournal{c}
	conv := converge.New(converge.Options{Client: c, Journal: j, JournalKey: staticKey})

	genuine, err := converge.Record(testKey, uid, manifest(ns, "2Gi"))
	if err != nil {
		t.Fatal(err)
	}
	privileged := manifest(ns, "2Gi")
	privileged.Spec.Template.Spec.Containers[0].Image = "registry.example/miner:1"
	privileged.Spec.Template.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	privileged.Spec.Template.Spec.ServiceAccountName = "cluster-admin"
	other := manifest(ns, "2Gi")
	other.Name = "other"
	sealedOther, err := converge.Record(testKey, uid, other)
	if err != nil {
		t.Fatal(err)
	}
	wrongKey, err := converge.Record([]byte("another key, not the controller's"), uid, privileged)
	if err != nil {
		t.Fatal(err)
	}
	forgedTemplate := genuine
	forgedTemplate.Object = runtime.RawExtension{Raw: mustJSON(t, converge.Prepare(privileged))}

	for _, tc := range []struct {
		name string
		rec  v1alpha1.PendingRecreate
	}{
		{"another Pod template under the genuine MAC", forgedTemplate},
		{"another name, sealed", sealedOther},
		{"no MAC (as written before the journal was sealed)", v1alpha1.PendingRecreate{UID: uid, Object: forgedTemplate.Object}},
		{"a MAC of another key", wrongKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := j.Save(ctx, key(ns), tc.rec); err != nil {
				t.Fatal(err)
			}
			progress, err := conv.Resume(ctx, key(ns))
			if progress != converge.NothingRecorded || !errors.Is(err, converge.ErrJournalRejected) {
				t.Fatalf("Resume = %v, %v; want nothing recorded and ErrJournalRejected", progress, err)
			}
			for _, name := range []string{stsName, other.Name} {
				err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &appsv1.StatefulSet{})
				if !apierrors.IsNotFound(err) {
					t.Errorf("statefulset %s/%s after a forged record: %v, want NotFound", ns, name, err)
				}
			}
			if rec, err := j.Load(ctx, key(ns)); err != nil || rec == nil {
				t.Errorf("journal after a rejected record = %v, %v; want it kept", rec, err)
			}
		})
	}

	if err := j.Save(ctx, key(ns), genuine); err != nil {
		t.Fatal(err)
	}
	if progress, err := conv.Resume(ctx, key(ns)); err != nil || progress != converge.Recreated {
		t.Fatalf("Resume of the genuine record = %v, %v; want re-created", progress, err)
	}
	var created appsv1.StatefulSet
	if err := c.Get(ctx, key(ns), &created); err != nil {
		t.Fatal(err)
	}
	if got := created.Spec.Template.Spec.Containers[0].Image; got != "registry.example/app:1" || created.Spec.Template.Spec.ServiceAccountName != "" {
		t.Errorf("re-created with image %q, service account %q; want the deleted StatefulSet's Pod template", got, created.Spec.Template.Spec.ServiceAccountName)
	}
	assertNoRecord(ctx, t, j, ns)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
