package gate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/plan"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// freezePolicy denies the re-create in a Namespace labelled freeze=true and
// any claim on a StorageClass that does not allow expansion: both read the
// facts Ask fills in.
const freezePolicy = `package claimwarden.claims

deny contains {"policy": "freeze", "msg": "no re-create during the freeze"} if {
	input.change.kind == "statefulset"
	input.change.recreate
	input.namespace.metadata.labels.freeze == "true"
}

deny contains {"policy": "fixed-class", "msg": sprintf("class %s does not expand", [input.storageClass.metadata.name])} if {
	input.change.kind == "claim"
	not input.storageClass.allowVolumeExpansion
}
`

// engine is the shipped policies plus the given ones, as the controller
// and check load them.
func engine(t *testing.T, extra string) *policies.Engine {
	t.Helper()
	dir := t.TempDir()
	if extra != "" {
		if err := os.WriteFile(filepath.Join(dir, "extra.rego"), []byte(extra), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e, err := policies.New(ctx, policies.Options{Dirs: []string{dir}, PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// proposal is a StatefulSet of replicas claims of 10Gi on class, proposed
// at size: its questions, as the controller asks them for a GitOps proposal.
func proposal(t *testing.T, replicas int32, class, size string) []plan.Question {
	t.Helper()
	live := fixtures.StatefulSet("shop", "web", replicas, class, "10Gi")
	desired := plan.WithTemplates(live, fixtures.StatefulSet("shop", "web", replicas, class, size))
	var pvcs []corev1.PersistentVolumeClaim
	byName := map[string]*corev1.PersistentVolumeClaim{}
	for o := range replicas {
		pvc := corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: diff.ClaimName("data", "web", o), Labels: live.Spec.Selector.MatchLabels,
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}},
			Spec: live.Spec.VolumeClaimTemplates[0].Spec,
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
				Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
		}
		pvcs = append(pvcs, pvc)
	}
	for i := range pvcs {
		byName[pvcs[i].Name] = &pvcs[i]
	}
	res, err := diff.Compute(diff.Input{Desired: desired, LiveTemplates: diff.LiveTemplatesOf(live), PVCs: pvcs})
	if err != nil {
		t.Fatal(err)
	}
	return plan.Questions(desired, res, byName, true)
}

// snapshot is a cluster's facts as check reads them: shared, with managed fields.
type snapshot struct {
	namespace *corev1.Namespace
	classes   map[string]*storagev1.StorageClass
	quotas    []corev1.ResourceQuota
	reads     atomic.Int32
}

func newSnapshot(freeze string) *snapshot {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	return &snapshot{
		namespace: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"freeze": freeze}, ManagedFields: managed}},
		classes: map[string]*storagev1.StorageClass{
			"fast":  {ObjectMeta: metav1.ObjectMeta{Name: "fast", ManagedFields: managed}, AllowVolumeExpansion: ptr.To(true)},
			"fixed": {ObjectMeta: metav1.ObjectMeta{Name: "fixed", ManagedFields: managed}, AllowVolumeExpansion: ptr.To(false)},
		},
	}
}

func (s *snapshot) facts() Facts {
	return Facts{
		Namespace:      func(context.Context) (*corev1.Namespace, error) { s.reads.Add(1); return s.namespace, nil },
		ResourceQuotas: func(context.Context) ([]corev1.ResourceQuota, error) { s.reads.Add(1); return s.quotas, nil },
		StorageClass: func(_ context.Context, pvc *corev1.PersistentVolumeClaim) (*storagev1.StorageClass, error) {
			s.reads.Add(1)
			return s.classes[*pvc.Spec.StorageClassName], nil
		},
		Source: policies.Source{Kind: "Kustomization", Namespace: "flux-system", Name: "shop", Revision: "main@sha1:0123"},
	}
}

func TestAskKeepsEveryVerdict(t *testing.T) {
	ctx := context.Background()
	ev := engine(t, freezePolicy)
	snap := newSnapshot("true")
	res, err := Ask(ctx, ev, proposal(t, 2, "fast", "40Gi"), snap.facts())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Claims) != 2 || res.Claims[0].Claim != "data-web-0" || res.Claims[1].Claim != "data-web-1" {
		t.Fatalf("claim answers %+v, want data-web-0 and data-web-1 in diff order", res.Claims)
	}
	denials := res.ClaimDenials()
	for _, a := range res.Claims {
		if a.Verdict.Allowed || !strings.HasPrefix(denials[a.Claim], "max-step: claim "+a.Claim) {
			t.Errorf("%s: verdict %+v, denial %q: want max-step's", a.Claim, a.Verdict, denials[a.Claim])
		}
		if a.Input.Source.Revision != "main@sha1:0123" || a.Input.StorageClass == nil || a.Input.StorageClass.Name != "fast" {
			t.Errorf("%s: source %+v, class %v: the facts were not filled in", a.Claim, a.Input.Source, a.Input.StorageClass)
		}
	}
	if res.StatefulSet == nil || res.StatefulSetDenial() != "freeze: no re-create during the freeze" {
		t.Fatalf("StatefulSet answer %+v, denial %q: want freeze's", res.StatefulSet, res.StatefulSetDenial())
	}
	if ns := res.StatefulSet.Input.Namespace; ns == nil || ns.ManagedFields != nil {
		t.Errorf("namespace %+v: want it without managed fields", ns)
	}
	if snap.namespace.ManagedFields == nil || snap.classes["fast"].ManagedFields == nil {
		t.Error("Ask changed the caller's objects; they may be shared")
	}

	// Allowed: a step within max-step, outside the freeze.
	res, err = Ask(ctx, ev, proposal(t, 1, "fast", "15Gi"), newSnapshot("false").facts())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ClaimDenials()) != 0 || res.StatefulSetDenial() != "" || len(res.Claims) != 1 || !res.Claims[0].Verdict.Allowed || !res.StatefulSet.Verdict.Allowed {
		t.Errorf("result %+v: want every question asked and allowed", res)
	}

	// The StorageClass is the claim's.
	res, err = Ask(ctx, ev, proposal(t, 1, "fixed", "15Gi"), newSnapshot("false").facts())
	if err != nil {
		t.Fatal(err)
	}
	if got := res.ClaimDenials()["data-web-0"]; !strings.Contains(got, "fixed-class: class fixed does not expand") {
		t.Errorf("denial %q: want fixed-class's, naming the claim's class", got)
	}
}

func TestAskReadsNothingWithoutQuestions(t *testing.T) {
	snap := newSnapshot("false")
	res, err := Ask(context.Background(), engine(t, ""), nil, snap.facts())
	if err != nil || res.StatefulSet != nil || len(res.Claims) != 0 || snap.reads.Load() != 0 {
		t.Errorf("result %+v, error %v, %d reads: want nothing asked or read", res, err, snap.reads.Load())
	}
}

func TestAskReturnsTheFactsErrors(t *testing.T) {
	questions := proposal(t, 1, "fast", "15Gi")
	broken := errors.New("the cache is not synced")
	for name, facts := range map[string]Facts{
		"namespace": {Namespace: func(context.Context) (*corev1.Namespace, error) { return nil, broken }},
		"quotas": {
			Namespace:      func(context.Context) (*corev1.Namespace, error) { return nil, nil },
			ResourceQuotas: func(context.Context) ([]corev1.ResourceQuota, error) { return nil, broken },
		},
		"class": {
			Namespace:      func(context.Context) (*corev1.Namespace, error) { return nil, nil },
			ResourceQuotas: func(context.Context) ([]corev1.ResourceQuota, error) { return nil, nil },
			StorageClass: func(context.Context, *corev1.PersistentVolumeClaim) (*storagev1.StorageClass, error) {
				return nil, broken
			},
		},
	} {
		if _, err := Ask(context.Background(), engine(t, ""), questions, facts); !errors.Is(err, broken) {
			t.Errorf("%s: error %v, want %v", name, err, broken)
		}
	}
}

// TestAskGivesEveryQuestionTheNamespacesQuotas: quota-fits, shipped, reads
// them; the StatefulSet-level question gets them too (a policy may limit
// claim counts).
func TestAskGivesEveryQuestionTheNamespacesQuotas(t *testing.T) {
	snap := newSnapshot("false")
	snap.quotas = []corev1.ResourceQuota{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "storage"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsStorage: resource.MustParse("24Gi")}},
		Status:     corev1.ResourceQuotaStatus{Used: corev1.ResourceList{corev1.ResourceRequestsStorage: resource.MustParse("20Gi")}},
	}}
	res, err := Ask(context.Background(), engine(t, ""), proposal(t, 2, "fast", "15Gi"), snap.facts())
	if err != nil {
		t.Fatal(err)
	}
	want := "quota-fits: claim data-web-0 (StatefulSet shop/web): 10Gi → 15Gi needs 5Gi more requests.storage, and ResourceQuota storage has 20Gi used of 24Gi: 1Gi over"
	if got := res.ClaimDenials()["data-web-0"]; got != want {
		t.Errorf("denial %q, want %q", got, want)
	}
	if q := res.StatefulSet.Input.ResourceQuotas; len(q) != 1 || q[0].Name != "storage" {
		t.Errorf("StatefulSet-level quotas %+v, want the namespace's", q)
	}
}
