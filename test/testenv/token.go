package testenv

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// tokenLifetime outlasts any run; the API server's signing key does not
// change when a test restarts it, so the token outlives restarts too.
const tokenLifetime = 24 * 60 * 60

// ServiceAccountConfig returns a configuration that authenticates as the
// existing ServiceAccount namespace/name with a token the API server issued
// for it (TokenRequest), as a client in a Pod does: no client certificate,
// whose verification on every request costs the API server more than a
// token's, and no impersonation, which costs an authorization more. Its
// permissions are what RBAC grants the account.
func (e *Env) ServiceAccountConfig(ctx context.Context, namespace, name string) (*rest.Config, error) {
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return nil, err
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](tokenLifetime)},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("testenv: a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return &rest.Config{
		Host:            e.Config.Host,
		TLSClientConfig: rest.TLSClientConfig{CAData: e.Config.CAData},
		BearerToken:     tr.Status.Token,
		QPS:             e.Config.QPS,
		Burst:           e.Config.Burst,
	}, nil
}

// WriteKubeconfig writes cfg's server, CA, credentials (a token, from
// ServiceAccountConfig, or a client certificate, as the admin's) and the
// identity it impersonates (as ConfigFor's) to path, for a program a test
// runs.
func WriteKubeconfig(path string, cfg *rest.Config) error {
	if cfg.BearerToken == "" && cfg.CertData == nil {
		return fmt.Errorf("testenv: writing %s: the configuration has no token and no client certificate", path)
	}
	const name = "claimwarden-testenv"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{
		Token:                 cfg.BearerToken,
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
		Impersonate:           cfg.Impersonate.UserName,
		ImpersonateGroups:     cfg.Impersonate.Groups,
	}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	return clientcmd.WriteToFile(*kc, path)
}
