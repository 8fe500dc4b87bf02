package source_test

import (
	"context"
	"strings"
	"testing"

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
