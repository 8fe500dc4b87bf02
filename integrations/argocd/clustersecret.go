package argocd

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
)

// Argo CD's cluster Secrets (operator manual, "Declarative Setup",
// Clusters): labelled so, in Argo CD's namespace, with the API server's
// URL at "server", Argo CD's name for the cluster at "name" and the
// credential, JSON, at "config".
const (
	// ClusterSecretTypeLabel marks Argo CD's Secrets by kind.
	ClusterSecretTypeLabel = "argocd.argoproj.io/secret-type"
	clusterSecretType      = "cluster"
	// maxClusterConfigBytes bounds the config parsed. The API server
	// already refuses a Secret over 1 MiB; the bound says so here.
	maxClusterConfigBytes = 1 << 20
)

// clusterConfig mirrors the fields of Argo CD's ClusterConfig read here.
type clusterConfig struct {
	Username           string     `json:"username"`
	Password           string     `json:"password"`
	BearerToken        string     `json:"bearerToken"`
	TLSClientConfig    clusterTLS `json:"tlsClientConfig"`
	ProxyURL           string     `json:"proxyUrl"`
	DisableCompression bool       `json:"disableCompression"`
	// Only whether these are set is read: both are refused.
	ExecProviderConfig any `json:"execProviderConfig"`
	AWSAuthConfig      any `json:"awsAuthConfig"`
}

// clusterTLS mirrors Argo CD's TLSClientConfig; the []byte fields are
// base64 in the JSON, as encoding/json reads them.
type clusterTLS struct {
	Insecure   bool   `json:"insecure"`
	ServerName string `json:"serverName"`
	CertData   []byte `json:"certData"`
	KeyData    []byte `json:"keyData"`
	CAData     []byte `json:"caData"`
}

// proxySchemes are the proxy URL schemes Go's HTTP transport dials.
var proxySchemes = []string{"http", "https", "socks5"}

// ClusterSecret reads an Argo CD cluster Secret: Argo CD's name for the
// cluster, its server without a trailing slash, and the configuration that
// reaches it with the credential Argo CD holds. Refused: a Secret without
// the cluster label (Argo CD would not read it as a cluster either), one
// without a server, and a credential claimwarden cannot hold, an exec
// provider (a command run in claimwarden's Pod) or AWS IAM authentication
// (a cloud identity of Argo CD's Pods, not claimwarden's). Errors name the
// Secret and the field, never a credential.
func ClusterSecret(secret *corev1.Secret) (name, server string, cfg *rest.Config, err error) {
	where := fmt.Sprintf("Argo CD cluster Secret %s/%s", secret.Namespace, secret.Name)
	fail := func(format string, args ...any) (string, string, *rest.Config, error) {
		return "", "", nil, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...))
	}
	if secret.Labels[ClusterSecretTypeLabel] != clusterSecretType {
		return fail("has no label %s: %s, so it is not a cluster Secret", ClusterSecretTypeLabel, clusterSecretType)
	}
	server = strings.TrimRight(string(secret.Data["server"]), "/")
	if server == "" {
		return fail(`key "server" is missing or empty`)
	}
	raw := secret.Data["config"]
	if len(raw) > maxClusterConfigBytes {
		return fail(`key "config" holds %d bytes, more than the %d it is read to`, len(raw), maxClusterConfigBytes)
	}
	var cc clusterConfig
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &cc); err != nil {
			return fail(`key "config": %s`, jsonCause(err))
		}
	}
	switch {
	case cc.ExecProviderConfig != nil:
		return fail(`key "config": execProviderConfig would run a command in claimwarden's Pod; give the cluster a bearerToken or a client certificate`)
	case cc.AWSAuthConfig != nil:
		return fail(`key "config": awsAuthConfig needs an AWS identity that claimwarden does not hold; give the cluster a bearerToken or a client certificate`)
	}
	cfg = &rest.Config{
		Host:               server,
		Username:           cc.Username,
		Password:           cc.Password,
		BearerToken:        cc.BearerToken,
		DisableCompression: cc.DisableCompression,
		TLSClientConfig: rest.TLSClientConfig{
			Insecure:   cc.TLSClientConfig.Insecure,
			ServerName: cc.TLSClientConfig.ServerName,
			CertData:   cc.TLSClientConfig.CertData,
			KeyData:    cc.TLSClientConfig.KeyData,
			CAData:     cc.TLSClientConfig.CAData,
		},
	}
	if cc.ProxyURL != "" {
		// The URL is not quoted: it may hold a proxy password.
		u, err := url.Parse(cc.ProxyURL)
		if err != nil || !slices.Contains(proxySchemes, u.Scheme) || u.Host == "" {
			return fail(`key "config": proxyUrl is not an http, https or socks5 URL`)
		}
		cfg.Proxy = http.ProxyURL(u)
	}
	return string(secret.Data["name"]), server, cfg, nil
}

// jsonCause says why the config is not Argo CD's JSON without quoting it:
// encoding/json's messages can hold a piece of the input.
func jsonCause(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var b64 base64.CorruptInputError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("is not JSON (a syntax error at byte %d)", syntax.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("field %s is not a %s", typ.Field, typ.Type)
	case errors.As(err, &b64):
		return fmt.Sprintf("holds invalid base64 (at byte %d of a value)", int64(b64))
	}
	return "is not Argo CD's cluster config"
}
