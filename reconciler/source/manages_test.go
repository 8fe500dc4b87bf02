package source_test

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/reconciler/source"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// TestAToolReachesOnlyWhatItManages: a desired state naming a StatefulSet
// the tool does not manage (another namespace's, as a tenant's build or a
// forged record would) proposes nothing for it and says so on the tool
// object; what it does manage is proposed with the tool's authority.
func TestAToolReachesOnlyWhatItManages(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if err := fixtures.Namespace(ctx, f.c, "bank"); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Create(ctx, desiredStatefulSet("bank", "vault", "1Gi")); err != nil {
		t.Fatal(err)
	}
	vault := types.NamespacedName{Namespace: "bank", Name: "vault"}

	f.set(map[string]string{keyAttempted: "r2", keyApplied: "r1", keyAccount: "deployer",
		prefixForeign + "bank.vault": "5Gi", prefixSTS + "web": "2Gi"})
	f.mustReconcile()
	if _, ok := f.store.Get(vault); ok {
		t.Error("bank/vault, which the tool does not manage, was proposed")
	}
	p, ok := f.store.Get(web)
	if !ok {
		t.Fatal("shop/web, which the tool manages, was not proposed")
	}
	if p.Authority == nil || p.Authority.User != "system:serviceaccount:shop:deployer" {
		t.Errorf("shop/web proposed with authority %+v, want the tool's service account shop/deployer", p.Authority)
	}
	got := f.said()
	var refusal string
	for _, e := range got {
		if strings.Contains(e, source.ReasonNotManaged) {
			refusal = e
		}
	}
	if !strings.Contains(refusal, "Warning") || !strings.Contains(refusal, "bank/vault") || !strings.Contains(refusal, "applies only into namespace shop") {
		t.Errorf("events %q, want a warning naming bank/vault and why it is left alone", got)
	}
	if owned := f.owned(); len(owned) != 1 || owned[0] != web {
		t.Errorf("proposals %v, want only shop/web", owned)
	}
}

// TestAProposalOutlivesItsStatefulSetsRecreate: while the live StatefulSet
// is gone (a re-create under way), a read of the source keeps what was
// proposed for it: there is no live object to ask Manages about, and the
// proposal was checked when it was made.
func TestAProposalOutlivesItsStatefulSetsRecreate(t *testing.T) {
	f := newFixture(t)
	f.set(map[string]string{keyAttempted: "r2", keyApplied: "r1", prefixSTS + "web": "2Gi"})
	f.mustReconcile()
	if _, ok := f.store.Get(web); !ok {
		t.Fatal("shop/web was not proposed")
	}
	if err := f.c.Delete(context.Background(), &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: web.Namespace, Name: web.Name}}); err != nil {
		t.Fatal(err)
	}
	f.set(map[string]string{keyAttempted: "r3", keyApplied: "r1", prefixSTS + "web": "2Gi"})
	f.mustReconcile()
	if _, ok := f.store.Get(web); !ok {
		t.Error("the proposal for shop/web was dropped while its StatefulSet was being re-created")
	}
}
