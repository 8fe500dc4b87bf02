package toolkit

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// The identity a tenant's kubeconfig applies as is the API server's
// answer, not what the kubeconfig says of itself.
func TestRemoteIdentityIsTheServersAnswer(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	c := testenv.Client(t, env.Config)
	ctx := context.Background()
	if err := fixtures.Namespace(ctx, c, "tenant-a"); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "applier"}}); err != nil {
		t.Fatal(err)
	}
	cfg, err := env.ServiceAccountConfig(ctx, "tenant-a", "applier")
	if err != nil {
		t.Fatal(err)
	}
	id, err := Remote{Cluster: "eu", Config: cfg}.Identity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if id.User != "system:serviceaccount:tenant-a:applier" || !slices.Contains(id.Groups, "system:serviceaccounts:tenant-a") {
		t.Errorf("identity %+v, want tenant-a's applier with its groups", id)
	}
	cfg.BearerToken = "forged"
	if _, err := (Remote{Cluster: "eu", Config: cfg}).Identity(ctx); err == nil {
		t.Error("a token the server does not accept gave an identity")
	}
}
