package argocd

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/cert"
)

// secretToken is the credential of the test Secrets: no error may quote it.
const secretToken = "s3cr3t-token"

// clusterSecret is an Argo CD cluster Secret in namespace argocd, labelled
// as one, with config as its "config" (JSON) unless config is nil.
func clusterSecret(server string, config any) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "prod", Labels: map[string]string{ClusterSecretTypeLabel: "cluster"}},
		Data:       map[string][]byte{"name": []byte("prod-eu"), "server": []byte(server)},
	}
	switch c := config.(type) {
	case nil:
	case string:
		s.Data["config"] = []byte(c)
	default:
		b, err := json.Marshal(c)
		if err != nil {
			panic(err)
		}
		s.Data["config"] = b
	}
	return s
}

func TestClusterSecret(t *testing.T) {
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("prod.example.com", nil, nil)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("bearer token", func(t *testing.T) {
		name, server, cfg, err := ClusterSecret(clusterSecret("https://prod.example.com:6443/", map[string]any{
			"bearerToken":     secretToken,
			"tlsClientConfig": map[string]any{"caData": base64.StdEncoding.EncodeToString(certPEM), "serverName": "api.prod"},
		}))
		if err != nil {
			t.Fatal(err)
		}
		if name != "prod-eu" || server != "https://prod.example.com:6443" || cfg.Host != server {
			t.Errorf("name %q, server %q, host %q; want prod-eu and https://prod.example.com:6443 (trailing slash gone) twice", name, server, cfg.Host)
		}
		if cfg.BearerToken != secretToken || !bytes.Equal(cfg.CAData, certPEM) || cfg.ServerName != "api.prod" || cfg.Insecure {
			t.Errorf("config: token set %t, CA equal %t, server name %q, insecure %t", cfg.BearerToken == secretToken, bytes.Equal(cfg.CAData, certPEM), cfg.ServerName, cfg.Insecure)
		}
		if cfg.ExecProvider != nil || cfg.Proxy != nil {
			t.Errorf("exec provider %v, proxy set %t: want neither", cfg.ExecProvider, cfg.Proxy != nil)
		}
	})

	t.Run("client certificate, proxy", func(t *testing.T) {
		_, _, cfg, err := ClusterSecret(clusterSecret("https://prod.example.com", map[string]any{
			"tlsClientConfig":    map[string]any{"certData": certPEM, "keyData": keyPEM, "insecure": true},
			"proxyUrl":           "http://proxy.example.com:3128",
			"disableCompression": true,
		}))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(cfg.CertData, certPEM) || !bytes.Equal(cfg.KeyData, keyPEM) || !cfg.Insecure || !cfg.DisableCompression {
			t.Errorf("cert equal %t, key equal %t, insecure %t, disableCompression %t; want all", bytes.Equal(cfg.CertData, certPEM), bytes.Equal(cfg.KeyData, keyPEM), cfg.Insecure, cfg.DisableCompression)
		}
		req, _ := http.NewRequest(http.MethodGet, "https://prod.example.com/api", nil)
		if cfg.Proxy == nil {
			t.Fatal("no proxy")
		}
		if u, err := cfg.Proxy(req); err != nil || u.String() != "http://proxy.example.com:3128" {
			t.Errorf("proxy %v (%v), want http://proxy.example.com:3128", u, err)
		}
	})

	t.Run("null exec provider is none", func(t *testing.T) {
		if _, _, _, err := ClusterSecret(clusterSecret("https://prod.example.com", `{"bearerToken": "t", "execProviderConfig": null}`)); err != nil {
			t.Errorf("%v, want accepted: null is Argo CD's unset", err)
		}
	})

	unlabelled := clusterSecret("https://prod.example.com", map[string]any{"bearerToken": secretToken})
	unlabelled.Labels = nil
	repository := clusterSecret("https://prod.example.com", map[string]any{"bearerToken": secretToken})
	repository.Labels[ClusterSecretTypeLabel] = "repository"
	for _, tc := range []struct {
		name   string
		secret *corev1.Secret
		want   string
	}{
		{"exec refused", clusterSecret("https://prod.example.com", map[string]any{
			"bearerToken":        secretToken,
			"execProviderConfig": map[string]any{"command": "argocd-k8s-auth", "args": []string{"gcp"}, "apiVersion": "client.authentication.k8s.io/v1beta1"},
		}), `key "config": execProviderConfig would run a command in claimwarden's Pod`},
		{"aws refused", clusterSecret("https://prod.example.com", map[string]any{
			"awsAuthConfig":   map[string]any{"clusterName": "prod", "roleARN": "arn:aws:iam::1:role/argocd"},
			"tlsClientConfig": map[string]any{"caData": certPEM},
		}), `key "config": awsAuthConfig needs an AWS identity`},
		{"unlabelled refused", unlabelled, "has no label argocd.argoproj.io/secret-type: cluster"},
		{"other Argo CD Secret refused", repository, "has no label argocd.argoproj.io/secret-type: cluster"},
		{"no server", clusterSecret("", map[string]any{"bearerToken": secretToken}), `key "server" is missing or empty`},
		{"not JSON", clusterSecret("https://prod.example.com", `{"bearerToken": "`+secretToken), `key "config": is not JSON (a syntax error at byte`},
		{"wrong type", clusterSecret("https://prod.example.com", `{"bearerToken": ["`+secretToken+`"]}`), `key "config": field bearerToken is not a string`},
		{"caData not base64", clusterSecret("https://prod.example.com", `{"tlsClientConfig": {"caData": "`+secretToken+`!"}}`), `key "config": holds invalid base64`},
		{"proxy not a URL", clusterSecret("https://prod.example.com", map[string]any{"bearerToken": "t", "proxyUrl": "ftp://u:" + secretToken + "@proxy"}), `key "config": proxyUrl is not an http, https or socks5 URL`},
		{"config too large", clusterSecret("https://prod.example.com", strings.Repeat(" ", maxClusterConfigBytes+1)), `key "config" holds 1048577 bytes, more than the 1048576`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, cfg, err := ClusterSecret(tc.secret)
			if err == nil {
				t.Fatalf("accepted (config %v), want an error containing %s", cfg != nil, tc.want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "Argo CD cluster Secret argocd/prod: ") || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q, want one naming the Secret and containing %q", msg, tc.want)
			}
			if strings.Contains(msg, secretToken) {
				t.Errorf("error %q quotes the credential", msg)
			}
		})
	}
}
