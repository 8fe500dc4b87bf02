package spokes

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kubeconfig is a kubeconfig whose current context joins cluster "spoke"
// and user "claimwarden", each written as the YAML lines given (indented
// under cluster: and user:); a context "other" joins them to cluster and
// user "other", whose lines are otherCluster and otherUser.
func kubeconfig(cluster, user, otherCluster, otherUser string) string {
	indent := func(s string) string { return "    " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n    ") }
	return `apiVersion: v1
kind: Config
current-context: spoke
contexts:
- name: spoke
  context: {cluster: spoke, user: claimwarden}
- name: other
  context: {cluster: other, user: other}
clusters:
- name: spoke
  cluster:
` + indent(cluster) + `
- name: other
  cluster:
` + indent(otherCluster) + `
users:
- name: claimwarden
  user:
` + indent(user) + `
- name: other
  user:
` + indent(otherUser) + "\n"
}

func TestKubeconfig(t *testing.T) {
	certPEM, keyPEM, certB64, keyB64 := pair(t)
	// hubToken is a file with a token in it, as the Pod's own service
	// account token is: a kubeconfig pointing at it must not be followed.
	dir := t.TempDir()
	hubToken := filepath.Join(dir, "token")
	pemFile := filepath.Join(dir, "tls.pem")
	for path, content := range map[string][]byte{hubToken: []byte("hub-identity"), pemFile: certPEM} {
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	server := "server: https://spoke.example.com:6443/\ncertificate-authority-data: " + certB64
	other := "server: https://other.example.com"
	token := "token: " + secretToken

	t.Run("token and CA inline", func(t *testing.T) {
		// The other context's user runs a command: it is never used, so it
		// does not matter.
		cfg, got, err := Kubeconfig(secret("flux", "spoke-kubeconfig", map[string]string{"value": kubeconfig(server, token, other, "exec: {command: /bin/sh, apiVersion: client.authentication.k8s.io/v1}")}), "value")
		if err != nil {
			t.Fatal(err)
		}
		if got != "https://spoke.example.com:6443" {
			t.Errorf("server %q, want https://spoke.example.com:6443 (no trailing slash)", got)
		}
		if cfg.BearerToken != secretToken || !bytes.Equal(cfg.CAData, certPEM) || cfg.ExecProvider != nil {
			t.Errorf("token set %t, CA equal %t, exec %v; want the inline token and CA, no exec", cfg.BearerToken == secretToken, bytes.Equal(cfg.CAData, certPEM), cfg.ExecProvider)
		}
	})

	t.Run("client certificate inline, another key", func(t *testing.T) {
		cfg, _, err := Kubeconfig(secret("flux", "spoke-kubeconfig", map[string]string{"config": kubeconfig(server, "client-certificate-data: "+certB64+"\nclient-key-data: "+keyB64, other, "")}), "config")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(cfg.CertData, certPEM) || !bytes.Equal(cfg.KeyData, keyPEM) {
			t.Errorf("cert equal %t, key equal %t; want the inline pair", bytes.Equal(cfg.CertData, certPEM), bytes.Equal(cfg.KeyData, keyPEM))
		}
	})

	for _, tc := range []struct {
		name, data, want string
	}{
		{"tokenFile refused", kubeconfig(server, "tokenFile: "+hubToken, other, ""),
			`user "claimwarden": tokenFile names the file "` + hubToken + `", which would be read in claimwarden's Pod; put the credential in token instead`},
		{"client-certificate path refused", kubeconfig(server, "client-certificate: "+pemFile+"\nclient-key-data: "+keyB64, other, ""),
			`user "claimwarden": client-certificate names the file`},
		{"client-key path refused", kubeconfig(server, "client-certificate-data: "+certB64+"\nclient-key: "+pemFile, other, ""),
			`user "claimwarden": client-key names the file`},
		{"certificate-authority path refused", kubeconfig("server: https://spoke.example.com\ncertificate-authority: "+pemFile, token, other, ""),
			`cluster "spoke": certificate-authority names the file`},
		{"relative path refused", kubeconfig(server, "tokenFile: token", other, ""),
			`tokenFile names the file "token"`},
		{"exec refused", kubeconfig(server, "exec: {command: aws, args: [eks, get-token], apiVersion: client.authentication.k8s.io/v1beta1}", other, ""),
			`user "claimwarden": exec would run "aws" in claimwarden's Pod`},
		{"auth-provider refused", kubeconfig(server, "auth-provider: {name: oidc, config: {id-token: "+secretToken+"}}", other, ""),
			`user "claimwarden": auth-provider "oidc" would run in claimwarden's Pod`},
		{"no current-context", strings.Replace(kubeconfig(server, token, other, ""), "current-context: spoke", "", 1),
			"has no current-context"},
		{"current-context names nothing", strings.Replace(kubeconfig(server, token, other, ""), "current-context: spoke", "current-context: gone", 1),
			`current-context "gone" names no context`},
		{"no server", kubeconfig("certificate-authority-data: "+certB64, token, other, ""),
			"no server found"},
		{"not a kubeconfig", "users: [{name: x, user: {token: " + secretToken + "}}]\nclusters: {",
			"is not a kubeconfig (YAML or JSON); the parser's message is withheld"},
		{"not a kubeconfig's types", "users: [{name: x, user: {token: [" + secretToken + "]}}]\n",
			"is not a kubeconfig (YAML or JSON); the parser's message is withheld"},
		{"missing", "", `is missing or empty`},
		{"too large", strings.Repeat("#", MaxKubeconfigBytes+1), "holds 1048577 bytes, more than the 1048576 a kubeconfig is read to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, err := Kubeconfig(secret("flux", "spoke-kubeconfig", map[string]string{"value": tc.data}), "value")
			if err == nil {
				t.Fatalf("accepted (a bearer token: %t), want an error containing %s", cfg.BearerToken != "", tc.want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, `kubeconfig Secret flux/spoke-kubeconfig key "value": `) || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q, want one naming the Secret and key and containing %q", msg, tc.want)
			}
			if strings.Contains(msg, secretToken) {
				t.Errorf("error %q quotes the credential", msg)
			}
		})
	}
}
