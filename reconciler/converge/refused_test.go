package converge_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/reconciler/converge"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// freezeCreates installs a ValidatingAdmissionPolicy that denies creating
// StatefulSets in ns: a real refusal by the API server, as a quota or an
// organisation's admission policy would give. It returns once the server
// enforces it (policies reach the admission plugin through an informer) and
// returns the function that lifts it.
func freezeCreates(ctx context.Context, t *testing.T, c client.Client, ns string) (lift func()) {
	t.Helper()
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule:       admissionv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"statefulsets"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: "false", Message: "statefulset creation frozen by the test"}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        ns,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}},
		},
	}
	for _, o := range []client.Object{policy, binding} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// A dry-run create of another name is refused once the policy is active.
	probe := manifest(ns, "1Gi")
	probe.Name = "probe"
	poll(ctx, t, 30*time.Second, "admission policy enforced", func(ctx context.Context) (bool, error) {
		err := c.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		return err != nil, nil
	})
	return func() {
		for _, o := range []client.Object{binding, policy} {
			if err := c.Delete(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Scenario 5: the create after the delete is refused. The StatefulSet must not
// be forgotten: the record stays, Resume keeps failing visibly while the
// refusal lasts, and re-creates the object once it is lifted.
func TestCreateRefusedKeepsRecordUntilResume(t *testing.T) {
	ctx := ctxFor(t)
	c, cs := cluster(t)
	ns := namespaceFor(ctx, t, c)
	live := readyStatefulSet(ctx, t, c, ns)
	before := take(ctx, t, c, ns)
	pods := watchPods(ctx, t, cs, ns)
	var lift func()
	// The refusal starts after the Converger's dry-run checks, as a policy
	// rolled out at the wrong moment would.
	j := hookJournal{cmJournal: cmJournal{c}, afterSave: func(ctx context.Context) error {
		lift = freezeCreates(ctx, t, c, ns)
		return nil
	}}
	conv := converge.New(converge.Options{Client: c, Journal: j, JournalKey: staticKey})

	progress, err := conv.Converge(ctx, live, manifest(ns, "2Gi"))
	if _, err = settle(ctx, t, conv, ns, progress, err); err == nil || errors.Is(err, converge.ErrRecreatedElsewhere) {
		t.Fatalf("Converge (then Resume while waiting) with creates refused = %v, want the refusal", err)
	}
	t.Log(err)
	if err := c.Get(ctx, key(ns), &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
		t.Fatalf("statefulset after the refused create: %v, want NotFound", err)
	}
	if rec, err := j.Load(ctx, key(ns)); err != nil || rec == nil || rec.UID != string(before.stsUID) {
		t.Fatalf("journal = %+v, %v; want the record for %s", rec, err, before.stsUID)
	}

	if progress, err := conv.Resume(ctx, key(ns)); progress == converge.Recreated || err == nil {
		t.Fatalf("Resume while refused = %v, %v; want the refusal", progress, err)
	}
	if rec, _ := j.Load(ctx, key(ns)); rec == nil {
		t.Fatal("a failed Resume dropped the record")
	}

	lift()
	// Removing the policy also reaches the admission plugin through an
	// informer, so Resume is retried as the rollout controller would.
	start := time.Now()
	poll(ctx, t, 30*time.Second, "Resume to succeed", func(ctx context.Context) (bool, error) {
		progress, err := conv.Resume(ctx, key(ns))
		return progress == converge.Recreated, err
	})
	assertAdopted(ctx, t, c, ns, before, "2Gi", start)
	pods.assertNoChurn(ctx, t, c, ns)
	assertNoRecord(ctx, t, j.cmJournal, ns)
}

// A crash after the record is written but before the delete is sent: Resume
// finds the old object alive and only drops the record.
func TestResumeAfterCrashBeforeDelete(t *testing.T) {
	ctx := ctxFor(t)
	c, _ := cluster(t)
	ns := namespaceFor(ctx, t, c)
	live := readyStatefulSet(ctx, t, c, ns)
	crashCtx, crash := context.WithCancel(ctx)
	j := hookJournal{cmJournal: cmJournal{c}, afterSave: func(context.Context) error { crash(); return nil }}

	_, err := converge.New(converge.Options{Client: c, Journal: j, JournalKey: staticKey}).Converge(crashCtx, live, manifest(ns, "2Gi"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Converge = %v, want context.Canceled", err)
	}
	if rec, err := j.Load(ctx, key(ns)); err != nil || rec == nil {
		t.Fatalf("journal = %v, %v; want the record (the delete's outcome is unknown to the dying process)", rec, err)
	}

	progress, err := converge.New(converge.Options{Client: c, Journal: j.cmJournal, JournalKey: staticKey}).Resume(ctx, key(ns))
	if err != nil || progress != converge.NothingRecorded {
		t.Fatalf("Resume = %v, %v; want nothing recorded", progress, err)
	}
	assertUntouched(ctx, t, c, ns, live)
	assertNoRecord(ctx, t, j.cmJournal, ns)
}
