package spokes

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// DefaultKubeconfigKey is the Secret key holding a kubeconfig when a Ref
// names none, as Flux's kubeConfig.secretRef reads it.
const DefaultKubeconfigKey = "value"

// MaxKubeconfigBytes bounds the kubeconfig parsed. The API server already
// refuses a Secret over 1 MiB; the bound says so here rather than relying on it.
const MaxKubeconfigBytes = 1 << 20

// Kubeconfig parses the kubeconfig at key of secret and returns the
// configuration of its current context and its server, without a trailing
// slash. An exec plugin or auth provider (code run in claimwarden's Pod)
// and a file reference (a CA, a client certificate or key, a token file:
// /var/run/secrets/kubernetes.io/serviceaccount/token would be claimwarden's
// own identity) are refused before anything reads them.
func Kubeconfig(secret *corev1.Secret, key string) (*rest.Config, string, error) {
	where := fmt.Sprintf("kubeconfig Secret %s/%s key %q", secret.Namespace, secret.Name, key)
	data := secret.Data[key]
	switch {
	case len(data) == 0:
		return nil, "", fmt.Errorf("%s: is missing or empty", where)
	case len(data) > MaxKubeconfigBytes:
		return nil, "", fmt.Errorf("%s: holds %d bytes, more than the %d a kubeconfig is read to", where, len(data), MaxKubeconfigBytes)
	}
	raw, err := clientcmd.Load(data)
	if err != nil {
		// The decoder's message may quote the document, credential included.
		return nil, "", fmt.Errorf("%s: is not a kubeconfig (YAML or JSON); the parser's message is withheld, as it may quote the credential", where)
	}
	if raw.CurrentContext == "" {
		return nil, "", fmt.Errorf("%s: has no current-context", where)
	}
	kctx, ok := raw.Contexts[raw.CurrentContext]
	if !ok {
		return nil, "", fmt.Errorf("%s: current-context %q names no context", where, raw.CurrentContext)
	}
	// Only the current context's cluster and user are read: an unsafe entry
	// elsewhere is never used.
	if err := refuseCode(kctx.AuthInfo, raw.AuthInfos[kctx.AuthInfo]); err != nil {
		return nil, "", fmt.Errorf("%s: %w", where, err)
	}
	if err := refuseFiles(kctx, raw.Clusters[kctx.Cluster], raw.AuthInfos[kctx.AuthInfo]); err != nil {
		return nil, "", fmt.Errorf("%s: %w", where, err)
	}
	// No config access: nothing is persisted, no other kubeconfig merged.
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, raw.CurrentContext, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", where, err)
	}
	return cfg, NormalizeServer(cfg.Host), nil
}

// KubeconfigParser is Kubeconfig as a Parser.
func KubeconfigParser(secret *corev1.Secret, key string) (string, string, *rest.Config, error) {
	cfg, server, err := Kubeconfig(secret, key)
	return "", server, cfg, err
}

// refuseCode refuses a user that runs code to authenticate.
func refuseCode(name string, user *clientcmdapi.AuthInfo) error {
	switch {
	case user == nil:
		return nil
	case user.Exec != nil:
		return fmt.Errorf("user %q: exec would run %q in claimwarden's Pod; give the user a token or client certificate", name, user.Exec.Command)
	case user.AuthProvider != nil:
		return fmt.Errorf("user %q: auth-provider %q would run in claimwarden's Pod; give the user a token or client certificate", name, user.AuthProvider.Name)
	}
	return nil
}

// refuseFiles refuses the cluster or user of kctx naming a file: a
// credential comes from the Secret only.
func refuseFiles(kctx *clientcmdapi.Context, cluster *clientcmdapi.Cluster, user *clientcmdapi.AuthInfo) error {
	// inline is the field holding the same credential as data.
	type ref struct{ owner, field, inline, path string }
	var refs []ref
	if cluster != nil {
		refs = append(refs, ref{fmt.Sprintf("cluster %q", kctx.Cluster), "certificate-authority", "certificate-authority-data", cluster.CertificateAuthority})
	}
	if user != nil {
		owner := fmt.Sprintf("user %q", kctx.AuthInfo)
		refs = append(refs,
			ref{owner, "client-certificate", "client-certificate-data", user.ClientCertificate},
			ref{owner, "client-key", "client-key-data", user.ClientKey},
			ref{owner, "tokenFile", "token", user.TokenFile})
	}
	for _, r := range refs {
		if r.path != "" {
			return fmt.Errorf("%s: %s names the file %q, which would be read in claimwarden's Pod; put the credential in %s instead", r.owner, r.field, r.path, r.inline)
		}
	}
	return nil
}
