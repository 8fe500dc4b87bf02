package toolkit

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

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

// Only the credential of a tenant's kubeconfig is taken: its proxy, TLS
// verification and server name are the listed cluster's.
func TestATenantsKubeconfigLendsOnlyItsCredential(t *testing.T) {
	listed := Cluster{Name: "eu", Server: "https://eu.example:6443", CAData: []byte("eu CA")}
	tenant := &rest.Config{Host: "https://eu.example:6443", BearerToken: "t", Impersonate: rest.ImpersonationConfig{UserName: "u"},
		Proxy:           func(*http.Request) (*url.URL, error) { return url.Parse("http://attacker.example:3128") },
		TLSClientConfig: rest.TLSClientConfig{Insecure: true, ServerName: "attacker.example", CAData: []byte("eu CA")}}
	got := credentialOnly(listed, tenant)
	if got.Proxy != nil || got.Insecure || got.ServerName != "" || got.Host != listed.Server || string(got.CAData) != "eu CA" {
		t.Errorf("config %+v takes more than the tenant's credential", got)
	}
	if got.BearerToken != "t" || got.Impersonate.UserName != "u" {
		t.Errorf("config %+v lost the tenant's credential", got)
	}
}
