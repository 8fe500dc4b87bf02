package toolkit

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/spokes"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// whoAmITimeout bounds the SelfSubjectReview a tenant's credential is
// asked with.
const whoAmITimeout = 10 * time.Second

// Cluster is a spoke claimwarden converges in, as the operator listed it
// (config clusters): a tool object's spec.kubeConfig only names one.
type Cluster struct {
	// Name is claimwarden's name for it (source.Desired.Cluster).
	Name string
	// Server is its API server URL without a trailing slash, and CAData
	// the CA bundle its certificate is verified with.
	Server string
	CAData []byte
	// Reader reads the cluster, uncached, with the operator's credential
	// (the tool's records there: a remote release's Secrets).
	Reader client.Reader
}

// Remote is where a tool object with spec.kubeConfig applies: a listed
// cluster, and the credential of the tool object's kubeconfig, with which
// the tool applies there.
type Remote struct {
	Cluster string
	Config  *rest.Config
	// Reader reads the cluster with the operator's credential
	// (Cluster.Reader).
	Reader client.Reader
}

// AppliesIn says why the tool object what (e.g. "the Kustomization
// shop/db"), applying to r, applies nothing in cluster, the one a live
// object was read in ("" claimwarden's own), or nil.
func (r Remote) AppliesIn(what, cluster string) error {
	if r.Cluster == cluster {
		return nil
	}
	return fmt.Errorf("%s applies to %s (spec.kubeConfig), not %s", what, source.DescribeCluster(r.Cluster), source.DescribeCluster(cluster))
}

// KubeConfig resolves the spec.kubeConfig of a tool object of namespace
// ns, described by what (e.g. "Kustomization shop/db") for errors, to a
// listed cluster. The Secret is read as Flux reads it (the key given, else
// value, else value.yaml); the kubeconfig is refused when it would run
// code or read a file (spokes.Kubeconfig); its server and CA must be a
// listed cluster's: the Secret is the tenant's, so it names a cluster and
// never makes one. A ConfigMap of a cloud provider's workload identity
// is refused: claimwarden holds no such identity.
func KubeConfig(ctx context.Context, r client.Reader, what, ns string, ref *meta.KubeConfigReference, clusters []Cluster) (Remote, error) {
	if ref.SecretRef == nil {
		return Remote{}, fmt.Errorf("%s applies to another cluster through a workload identity (spec.kubeConfig.configMapRef), which claimwarden does not hold", what)
	}
	var secret corev1.Secret
	key := types.NamespacedName{Namespace: ns, Name: ref.SecretRef.Name}
	if err := r.Get(ctx, key, &secret); err != nil {
		return Remote{}, fmt.Errorf("%s: reading its kubeconfig Secret %s (spec.kubeConfig.secretRef): %w", what, key, err)
	}
	cfg, server, err := spokes.Kubeconfig(&secret, kubeConfigKey(&secret, ref.SecretRef.Key))
	if err != nil {
		return Remote{}, fmt.Errorf("%s: %w", what, err)
	}
	for _, c := range clusters {
		if c.Server != server {
			continue
		}
		if !bytes.Equal(c.CAData, cfg.CAData) {
			return Remote{}, fmt.Errorf("%s: its kubeconfig (Secret %s) names cluster %s (%s) with a CA other than the one listed for it", what, key, c.Name, server)
		}
		return Remote{Cluster: c.Name, Config: credentialOnly(c, cfg), Reader: c.Reader}, nil
	}
	return Remote{}, fmt.Errorf("%s applies to cluster %s (spec.kubeConfig, Secret %s), which is not one claimwarden is configured for (clusters)", what, server, key)
}

// kubeConfigKey is the key Flux reads secret's kubeconfig from: key if
// set, else "value", else "value.yaml".
func kubeConfigKey(secret *corev1.Secret, key string) string {
	switch {
	case key != "":
		return key
	case secret.Data[spokes.DefaultKubeconfigKey] == nil && secret.Data["value.yaml"] != nil:
		return "value.yaml"
	}
	return spokes.DefaultKubeconfigKey
}

// Identity is who the remote's credential authenticates as on its
// cluster, asked there (a SelfSubjectReview): the tool applies as that
// user when it impersonates no service account, so every write claimwarden
// makes there for the tool object is checked as that user.
func (r Remote) Identity(ctx context.Context) (*v1alpha1.Identity, error) {
	cfg := rest.CopyConfig(r.Config)
	cfg.Timeout = whoAmITimeout
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("asking cluster %s who the kubeconfig's user is (SelfSubjectReview): %w", r.Cluster, err)
	}
	u := review.Status.UserInfo
	if u.Username == "" {
		return nil, fmt.Errorf("cluster %s says the kubeconfig's user has no name (SelfSubjectReview)", r.Cluster)
	}
	return &v1alpha1.Identity{User: u.Username, Groups: u.Groups}, nil
}

// credentialOnly reaches cluster c as the operator listed it (its server
// and CA, no proxy, TLS verified) with only the credential of the tenant's
// kubeconfig tenant: whatever else a tenant writes there (a proxy-url, an
// insecure-skip-tls-verify, a tls-server-name) never steers where
// claimwarden connects.
func credentialOnly(c Cluster, tenant *rest.Config) *rest.Config {
	return &rest.Config{
		Host:        c.Server,
		BearerToken: tenant.BearerToken,
		Username:    tenant.Username,
		Password:    tenant.Password,
		Impersonate: tenant.Impersonate,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   c.CAData,
			CertData: tenant.CertData,
			KeyData:  tenant.KeyData,
		},
	}
}
