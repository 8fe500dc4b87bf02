package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// argoNamespace holds the cluster Secrets on the hub, as Argo CD's namespace does.
const argoNamespace = "argocd"

// spokeName is claimwarden's name (and Argo CD's) for simulated spoke i.
func spokeName(i int) string { return fmt.Sprintf("sim-%02d", i) }

// registerSpokes writes, on the hub, one Argo CD cluster Secret per proxy,
// each naming its proxy as the server, trusting its certificate and
// holding token (claimwarden's on the spoke), and returns the `clusters:`
// configuration naming them. A Secret of an earlier row is updated.
func registerSpokes(ctx context.Context, hub client.Client, proxies []*proxy, token string) (string, error) {
	var conf strings.Builder
	if len(proxies) > 0 {
		conf.WriteString("clusters:\n")
	}
	for i, p := range proxies {
		raw, err := json.Marshal(map[string]any{
			"bearerToken":     token,
			"tlsClientConfig": map[string]any{"caData": p.caPEM},
		})
		if err != nil {
			return "", err
		}
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: argoNamespace, Name: "cluster-" + spokeName(i)}}
		if _, err := controllerutil.CreateOrUpdate(ctx, hub, s, func() error {
			s.Labels = map[string]string{"argocd.argoproj.io/secret-type": "cluster"}
			s.Data = map[string][]byte{"name": []byte(spokeName(i)), "server": []byte(p.URL()), "config": raw}
			return nil
		}); err != nil {
			return "", fmt.Errorf("cluster Secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		fmt.Fprintf(&conf, "- name: %s\n  secretRef: {namespace: %s, name: %s}\n", spokeName(i), argoNamespace, s.Name)
	}
	return conf.String(), nil
}

// writeConfig writes claimwarden's configuration file: the label selector
// and the clusters.
func writeConfig(path, selector, clusters string) error {
	return os.WriteFile(path, []byte(fmt.Sprintf("labelSelector: %q\n%s", selector, clusters)), 0o600)
}
