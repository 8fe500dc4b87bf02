package flux

import (
	"context"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/claimwarden/claimwarden/integrations/toolkit"
	"github.com/claimwarden/claimwarden/reconciler/source"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// spokeEU is the one spoke the operator listed.
var spokeEU = toolkit.Cluster{Name: "eu", Server: "https://eu.example:6443", CAData: []byte("eu CA")}

// kubeconfigSecret is a tenant's kubeconfig Secret of tenant-a at key
// value for server with ca, its user authenticated as edit says.
func kubeconfigSecret(t *testing.T, name, server string, ca []byte, edit func(*clientcmdapi.AuthInfo)) *corev1.Secret {
	t.Helper()
	user := &clientcmdapi.AuthInfo{Token: "tenant-token"}
	if edit != nil {
		edit(user)
	}
	secret, err := fixtures.KubeconfigSecret("tenant-a", name, server, ca, user)
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// blockedRemote is tenant-a/apps blocked at a new revision, applying to
// the cluster of Secret secret.
func blockedRemote(ref *meta.KubeConfigReference) *kustomizev1.Kustomization {
	ks := tenantKustomization("")
	ks.Spec.KubeConfig = ref
	ks.Status.LastAttemptedRevision = "main@sha1:2"
	ks.Status.LastAppliedRevision = "main@sha1:1"
	return ks
}

// A Kustomization's kubeConfig Secret is its tenant's: it may name a
// listed spoke, never make one; whatever else it names is left alone.
func TestRemoteKustomizations(t *testing.T) {
	reader := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(
		kubeconfigSecret(t, "listed", spokeEU.Server+"/", spokeEU.CAData, nil),
		kubeconfigSecret(t, "unlisted", "https://hub.example:6443", spokeEU.CAData, nil),
		kubeconfigSecret(t, "other-ca", spokeEU.Server, []byte("the tenant's own CA"), nil),
		kubeconfigSecret(t, "token-file", spokeEU.Server, spokeEU.CAData, func(u *clientcmdapi.AuthInfo) {
			u.Token, u.TokenFile = "", "/var/run/secrets/kubernetes.io/serviceaccount/token"
		}),
		kubeconfigSecret(t, "exec", spokeEU.Server, spokeEU.CAData, func(u *clientcmdapi.AuthInfo) {
			u.Token, u.Exec = "", &clientcmdapi.ExecConfig{Command: "sh", APIVersion: "client.authentication.k8s.io/v1"}
		}),
	).Build()
	k := &Kustomizations{Reader: reader, Clusters: []toolkit.Cluster{spokeEU}}
	secret := func(name string) *meta.KubeConfigReference {
		return &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: name}}
	}
	for _, c := range []struct {
		name string
		ref  *meta.KubeConfigReference
		want string // part of the note; "" when it is read as the spoke's
	}{
		{"a listed spoke", secret("listed"), ""},
		{"a cluster nobody listed", secret("unlisted"), "cluster https://hub.example:6443 (spec.kubeConfig, Secret tenant-a/unlisted), which is not one claimwarden is configured for"},
		{"the spoke's URL with another CA", secret("other-ca"), "with a CA other than the one listed for it"},
		{"claimwarden's own token", secret("token-file"), "tokenFile"},
		{"code run in claimwarden's Pod", secret("exec"), "exec would run"},
		{"no such Secret", secret("gone"), "reading its kubeconfig Secret tenant-a/gone"},
		{"a workload identity", &meta.KubeConfigReference{ConfigMapRef: &meta.LocalObjectReference{Name: "aws"}}, "workload identity"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ks := blockedRemote(c.ref)
			r, err := k.Read(context.Background(), ks)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" {
				remote, err := k.remote(context.Background(), ks)
				if r.State != source.Blocked || err != nil || remote.Cluster != spokeEU.Name {
					t.Errorf("reading %+v, remote %+v, %v: want blocked, applying to %s", r, remote, err, spokeEU.Name)
				}
				return
			}
			if r.State != source.Skipped || len(r.Notes) != 1 || r.Notes[0].Reason != ReasonRemoteCluster || !strings.Contains(r.Notes[0].Message, c.want) {
				t.Errorf("reading %+v, want skipped with a %s note saying %q", r, ReasonRemoteCluster, c.want)
			}
			if strings.Contains(r.Notes[0].Message, "tenant-token") {
				t.Errorf("the note %q quotes the tenant's token", r.Notes[0].Message)
			}
		})
	}
}

// With a service account, Flux impersonates it on the remote cluster
// too: that is the authority, and the tenant's kubeconfig is not needed.
// At rest, a remote Kustomization applies only what its inventory names
// in the spoke it applies to: nothing of this cluster, whatever its
// inventory says.
func TestRemoteKustomizationAuthorityAndRest(t *testing.T) {
	ks := blockedRemote(&meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: "gone"}})
	ks.Spec.ServiceAccountName = "deployer"
	reader := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(kubeconfigSecret(t, "listed", spokeEU.Server, spokeEU.CAData, nil)).Build()
	k := &Kustomizations{Reader: reader, Clusters: []toolkit.Cluster{spokeEU}}
	id, err := k.Authority(context.Background(), ks)
	if err != nil || id == nil || id.User != "system:serviceaccount:tenant-a:deployer" {
		t.Errorf("authority %+v, %v: want tenant-a's deployer", id, err)
	}
	ks = tenantKustomization("", "shop_db_apps_StatefulSet")
	ks.Spec.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: "listed"}}
	err = k.ManagesAtRest(context.Background(), ks, "", liveStatefulSet("shop", "db", nil))
	if want := "the Kustomization tenant-a/apps applies to cluster eu (spec.kubeConfig), not the cluster claimwarden runs in"; err == nil || err.Error() != want {
		t.Errorf("at rest in this cluster: %v, want %q: the inventory is the spoke's", err, want)
	}
	if err := k.ManagesAtRest(context.Background(), ks, "eu", liveStatefulSet("shop", "db", nil)); err != nil {
		t.Errorf("at rest in the spoke: %v, want managed (its inventory)", err)
	}
	if err := k.ManagesAtRest(context.Background(), ks, "eu", liveStatefulSet("shop", "web", nil)); err == nil || !strings.Contains(err.Error(), "not in the inventory") {
		t.Errorf("a StatefulSet of the spoke its inventory does not name: %v, want refused", err)
	}
	local := tenantKustomization("", "shop_db_apps_StatefulSet")
	if err := k.ManagesAtRest(context.Background(), local, "eu", liveStatefulSet("shop", "db", nil)); err == nil || !strings.Contains(err.Error(), "applies to the cluster claimwarden runs in (spec.kubeConfig), not cluster eu") {
		t.Errorf("a Kustomization of this cluster, its StatefulSet's namesake in the spoke: %v, want refused", err)
	}
}
