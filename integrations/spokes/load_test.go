package spokes

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// toolParser stands for a tool's parser (argocd.ClusterSecret): it hands
// back what the Secret's keys say, so that Load's own checks are tested on
// whatever a parser might return.
func toolParser(secret *corev1.Secret) (string, string, *rest.Config, error) {
	d := secret.Data
	cfg := &rest.Config{
		BearerToken:     string(d["token"]),
		BearerTokenFile: string(d["tokenFile"]),
		TLSClientConfig: rest.TLSClientConfig{CAData: d["caData"]},
	}
	if len(d["exec"]) > 0 {
		cfg.ExecProvider = &clientcmdapi.ExecConfig{Command: string(d["exec"])}
	}
	return string(d["name"]), string(d["server"]), cfg, nil
}

var parsers = map[Type]Parser{TypeArgoCD: ArgoCDParser(toolParser), TypeKubeconfig: KubeconfigParser}

func ref(name string, typ Type, ns, secretName, key string) Ref {
	return Ref{Name: name, Type: typ, Secret: types.NamespacedName{Namespace: ns, Name: secretName}, Key: key}
}

func TestLoad(t *testing.T) {
	certPEM, _, certB64, _ := pair(t)
	reader := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(
		secret("argocd", "cluster-eu", map[string]string{"name": "prod-eu", "server": "https://eu.example.com/", "token": secretToken, "caData": string(certPEM)}),
		secret("claimwarden", "us", map[string]string{"value": kubeconfig("server: https://us.example.com\ncertificate-authority-data: "+certB64, "token: "+secretToken, "server: https://other", "")}),
	).Build()

	s, err := Load(context.Background(), reader, []Ref{
		ref("eu", TypeArgoCD, "argocd", "cluster-eu", ""),
		ref("us", TypeKubeconfig, "claimwarden", "us", DefaultKubeconfigKey),
	}, parsers)
	if err != nil {
		t.Fatal(err)
	}
	eu, ok := s.ByArgoCDName("prod-eu")
	if !ok || eu.Name != "eu" || eu.Server != "https://eu.example.com" || eu.Config.Host != eu.Server || string(eu.CAData) != string(certPEM) || eu.Config.BearerToken != secretToken {
		t.Errorf("eu: found %t, name %q, server %q, host %q, CA equal %t, token set %t",
			ok, eu.Name, eu.Server, eu.Config.Host, string(eu.CAData) == string(certPEM), eu.Config.BearerToken == secretToken)
	}
	us, ok := s.ByServer("https://us.example.com")
	if !ok || us.Name != "us" || us.ArgoCDName != "" || us.Config.BearerToken != secretToken {
		t.Errorf("us: found %t, name %q, Argo CD name %q, token set %t", ok, us.Name, us.ArgoCDName, us.Config.BearerToken == secretToken)
	}
}

func TestLoadRefuses(t *testing.T) {
	certPEM, _, _, _ := pair(t)
	good := map[string]string{"server": "https://eu.example.com", "token": secretToken}
	with := func(k, v string) map[string]string {
		m := map[string]string{k: v}
		for gk, gv := range good {
			if _, ok := m[gk]; !ok {
				m[gk] = gv
			}
		}
		return m
	}
	for _, tc := range []struct {
		name string
		ref  Ref
		data map[string]string // the Secret's; nil: no Secret
		want string
	}{
		{"no Secret", ref("eu", TypeArgoCD, "argocd", "gone", ""), nil,
			`clusters[0] (eu): reading Secret argocd/gone: secrets "gone" not found`},
		{"no parser", ref("eu", "Rancher", "argocd", "eu", ""), good,
			`clusters[0] (eu): type "Rancher" has no parser`},
		{"parser error", ref("eu", TypeKubeconfig, "argocd", "eu", "value"), good,
			`clusters[0] (eu): kubeconfig Secret argocd/eu key "value": is missing or empty`},
		{"http", ref("eu", TypeArgoCD, "argocd", "eu", ""), with("server", "http://eu.example.com"),
			`clusters[0] (eu): credential in Secret argocd/eu: server http://eu.example.com is not an https URL`},
		{"password in server", ref("eu", TypeArgoCD, "argocd", "eu", ""), with("server", "https://admin:"+secretToken+"@eu.example.com"),
			`clusters[0] (eu): credential in Secret argocd/eu: the server URL holds a user name or password`},
		{"server not a URL", ref("eu", TypeArgoCD, "argocd", "eu", ""), with("server", "https://eu.example.com:"+secretToken),
			`clusters[0] (eu): credential in Secret argocd/eu: the server is not a URL`},
		{"no credential", ref("eu", TypeArgoCD, "argocd", "eu", ""), with("token", ""),
			`clusters[0] (eu): credential in Secret argocd/eu: there is no credential`},
		{"a file", ref("eu", TypeArgoCD, "argocd", "eu", ""), with("tokenFile", "/var/run/secrets/kubernetes.io/serviceaccount/token"),
			`clusters[0] (eu): credential in Secret argocd/eu: the credential names a file in claimwarden's Pod`},
		{"code", ref("eu", TypeArgoCD, "argocd", "eu", ""), with("exec", "gke-gcloud-auth-plugin"),
			`clusters[0] (eu): credential in Secret argocd/eu: the credential runs code in claimwarden's Pod`},
		{"CA not PEM", ref("eu", TypeArgoCD, "argocd", "eu", ""), with("caData", secretToken),
			`clusters[0] (eu): credential in Secret argocd/eu: the TLS settings do not load`},
		{"the hub", ref("eu", TypeArgoCD, "argocd", "eu", ""), with("server", "https://kubernetes.default.svc"),
			`cluster "eu": server https://kubernetes.default.svc is the cluster claimwarden runs in`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme)
			if tc.data != nil {
				b = b.WithObjects(secret(tc.ref.Secret.Namespace, tc.ref.Secret.Name, tc.data))
			}
			s, err := Load(context.Background(), b.Build(), []Ref{tc.ref}, parsers)
			if err == nil {
				t.Fatalf("loaded %v, want an error containing %s", s.All(), tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secretToken) {
				t.Errorf("error %q quotes the credential", err)
			}
		})
	}

	// A CA that parses is accepted: the refusal above is the CA's.
	reader := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(secret("argocd", "eu", with("caData", string(certPEM)))).Build()
	if _, err := Load(context.Background(), reader, []Ref{ref("eu", TypeArgoCD, "argocd", "eu", "")}, parsers); err != nil {
		t.Errorf("with a PEM CA: %v", err)
	}
}

// Every bad entry is reported, each naming its place in the list, and
// entries that load are refused together when two clash.
func TestLoadReportsEveryEntry(t *testing.T) {
	reader := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(
		secret("argocd", "a", map[string]string{"server": "https://a.example.com", "token": secretToken}),
		secret("argocd", "b", map[string]string{"server": "https://a.example.com/", "token": secretToken}),
	).Build()
	_, err := Load(context.Background(), reader, []Ref{
		ref("a", TypeArgoCD, "argocd", "a", ""),
		ref("x", TypeArgoCD, "argocd", "x", ""),
		ref("y", TypeKubeconfig, "argocd", "a", "value"),
	}, parsers)
	for _, want := range []string{`clusters[1] (x): reading Secret argocd/x`, `clusters[2] (y): kubeconfig Secret argocd/a key "value"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one containing %s", err, want)
		}
	}
	_, err = Load(context.Background(), reader, []Ref{ref("a", TypeArgoCD, "argocd", "a", ""), ref("b", TypeArgoCD, "argocd", "b", "")}, parsers)
	if err == nil || !strings.Contains(err.Error(), `clusters "a" and "b" have the same server "https://a.example.com"`) {
		t.Errorf("two Secrets of one server: %v, want refused", err)
	}
}
