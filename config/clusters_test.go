package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/integrations/spokes"
)

const clustersFile = `
argocd:
  controlPlaneNamespace: gitops
clusters:
- name: prod-eu
  secretRef: {name: cluster-prod-eu}
- name: prod-us
  type: ArgoCD
  secretRef: {namespace: argocd-us, name: cluster-prod-us}
- name: edge
  type: Kubeconfig
  secretRef: {name: edge-kubeconfig}
- Name: lab
  Type: Kubeconfig
  SecretRef: {Namespace: lab, Name: lab, Key: kubeconfig.yaml}
`

// The entries load as written; a Secret without a namespace is in Argo
// CD's namespace (type ArgoCD, the default type) or the Pod's
// (Kubeconfig), a kubeconfig without a key at "value"; keys inside an
// entry are case-insensitive.
func TestLoadClusters(t *testing.T) {
	inPod(t, "ops")
	c, err := Load(nil, writeConfig(t, clustersFile), nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := []Cluster{
		{Name: "prod-eu", Type: spokes.TypeArgoCD, SecretRef: ClusterSecretRef{Namespace: "gitops", Name: "cluster-prod-eu"}},
		{Name: "prod-us", Type: spokes.TypeArgoCD, SecretRef: ClusterSecretRef{Namespace: "argocd-us", Name: "cluster-prod-us"}},
		{Name: "edge", Type: spokes.TypeKubeconfig, SecretRef: ClusterSecretRef{Namespace: "ops", Name: "edge-kubeconfig", Key: "value"}},
		{Name: "lab", Type: spokes.TypeKubeconfig, SecretRef: ClusterSecretRef{Namespace: "lab", Name: "lab", Key: "kubeconfig.yaml"}},
	}
	if diff := cmp.Diff(want, c.Clusters); diff != "" {
		t.Errorf("Clusters (-want +got):\n%s", diff)
	}
	wantRefs := []spokes.Ref{
		{Name: "prod-eu", Type: spokes.TypeArgoCD, Secret: types.NamespacedName{Namespace: "gitops", Name: "cluster-prod-eu"}},
		{Name: "prod-us", Type: spokes.TypeArgoCD, Secret: types.NamespacedName{Namespace: "argocd-us", Name: "cluster-prod-us"}},
		{Name: "edge", Type: spokes.TypeKubeconfig, Secret: types.NamespacedName{Namespace: "ops", Name: "edge-kubeconfig"}, Key: "value"},
		{Name: "lab", Type: spokes.TypeKubeconfig, Secret: types.NamespacedName{Namespace: "lab", Name: "lab"}, Key: "kubeconfig.yaml"},
	}
	if diff := cmp.Diff(wantRefs, c.SpokeRefs()); diff != "" {
		t.Errorf("SpokeRefs (-want +got):\n%s", diff)
	}
	if len(Default().Clusters) != 0 {
		t.Errorf("Default().Clusters = %v, want none", Default().Clusters)
	}
}

// Each invalid entry is refused, naming the key clusters[i].field.
func TestClustersRejects(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"no name", "clusters:\n- secretRef: {name: s}\n",
			`clusters[0].name: "" is empty: name the cluster`},
		{"name not a label", "clusters:\n- name: Prod.EU\n  secretRef: {name: s}\n",
			`clusters[0].name: "Prod.EU" is not a DNS-1123 label: `},
		{"in-cluster", "clusters:\n- name: in-cluster\n  secretRef: {name: s}\n",
			`clusters[0].name: "in-cluster" is the name of the cluster claimwarden runs in`},
		{"same name", "clusters:\n- name: eu\n  secretRef: {name: a}\n- name: us\n  secretRef: {name: b}\n- name: eu\n  secretRef: {name: c}\n",
			`clusters[2].name: "eu" is also the name of clusters[0]`},
		{"unknown type", "clusters:\n- name: eu\n  type: Rancher\n  secretRef: {name: s}\n",
			`clusters[0].type: "Rancher" is not one of ArgoCD, Kubeconfig`},
		{"type in lower case", "clusters:\n- name: eu\n  type: kubeconfig\n  secretRef: {name: s}\n",
			`clusters[0].type: "kubeconfig" is not one of ArgoCD, Kubeconfig`},
		{"no Secret", "clusters:\n- name: eu\n",
			`clusters[0].secretRef.name: "" is not a Secret name: `},
		{"Secret name", "clusters:\n- name: eu\n  secretRef: {name: Bad_Name}\n",
			`clusters[0].secretRef.name: "Bad_Name" is not a Secret name: `},
		{"namespace", "clusters:\n- name: eu\n  secretRef: {namespace: Argo_CD, name: s}\n",
			`clusters[0].secretRef.namespace: "Argo_CD" is not a namespace name: `},
		{"key with ArgoCD", "clusters:\n- name: eu\n  secretRef: {name: s, key: config}\n",
			`clusters[0].secretRef.key: "config" is set, but an Argo CD cluster Secret's keys are server, name and config`},
		{"kubeconfig key", "clusters:\n- name: eu\n  type: Kubeconfig\n  secretRef: {name: s, key: a/b}\n",
			`clusters[0].secretRef.key: "a/b" is not a Secret key: `},
		{"same Secret", "clusters:\n- name: eu\n  secretRef: {namespace: argocd, name: s}\n- name: us\n  secretRef: {name: s}\n",
			`clusters[1].secretRef: "argocd/s" is also the Secret of clusters[0]`},
		{"unknown key", "clusters:\n- name: eu\n  secretRef: {name: s}\n  server: https://eu.example.com\n",
			`unknown key "clusters[0].server" (known keys of a cluster: name, type, secretRef.namespace, secretRef.name, secretRef.key)`},
		{"unknown key in secretRef", "clusters:\n- name: eu\n  secretRef: {name: s, nmespace: argocd}\n",
			`unknown key "clusters[0].secretRef.nmespace"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(nil, writeConfig(t, tc.file), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %s", err, tc.want)
			}
		})
	}
	// A kubeconfig's key may differ per entry of one Secret.
	if _, err := Load(nil, writeConfig(t, "clusters:\n- name: eu\n  type: Kubeconfig\n  secretRef: {name: s, key: eu}\n- name: us\n  type: Kubeconfig\n  secretRef: {name: s, key: us}\n"), nil); err != nil {
		t.Errorf("two kubeconfigs of one Secret: %v", err)
	}
	if _, err := Load(nil, "", []string{"CLAIMWARDEN_CLUSTERS=eu"}); err == nil || !strings.Contains(err.Error(), "clusters can be set in the configuration file only") {
		t.Errorf("CLAIMWARDEN_CLUSTERS: %v, want refused as file only", err)
	}
}

// With clusters listed, autoresize reads each cluster's usage from its own
// series: the cluster label is required, a spoke is not named as the label
// names claimwarden's own cluster, and each cluster's selector matches its
// own value of the label.
func TestClustersUsage(t *testing.T) {
	const base = "clusters:\n- name: eu\n  secretRef: {name: s}\n" +
		"autoresize:\n  namespaces: [{namespace: shop, repositoryPrefixes: ['https://git.example.com/shop/']}]\n" +
		"  hosts: [{url: 'https://git.example.com', type: gitea, tokenSecretRef: {name: t}}]\n  prometheus:\n    url: http://thanos.monitoring:9090\n"
	for _, tc := range []struct {
		name, file, want string
	}{
		{"no cluster label", base,
			`autoresize.prometheus.clusterLabel: "" is empty: with clusters listed, autoresize reads each cluster's usage from its own series`},
		{"a spoke named as the hub's series", base + "    clusterLabel: cluster\n    clusterLabelValue: eu\n",
			`clusters[0].name: "eu" is autoresize.prometheus.clusterLabelValue, the cluster of the series of the cluster claimwarden runs in`},
		{"the selector matching on the label", base + "    clusterLabel: cluster\n    seriesSelector: 'job=\"kubelet\", cluster=\"eu\"'\n",
			`autoresize.prometheus.seriesSelector: "job=\"kubelet\", cluster=\"eu\"" matches on cluster, the clusterLabel`},
		{"a label claimwarden matches itself", base + "    clusterLabel: namespace\n",
			`autoresize.prometheus.clusterLabel: "namespace" is not a label name claimwarden may match on`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(nil, writeConfig(t, tc.file), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %s", err, tc.want)
			}
		})
	}
	c, err := Load(nil, writeConfig(t, base+"    clusterLabel: cluster\n    clusterLabelValue: hub\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for cluster, want := range map[string]string{"": `job="kubelet", metrics_path="/metrics", cluster="hub"`, "eu": `job="kubelet", metrics_path="/metrics", cluster="eu"`} {
		if sel, err := c.Autoresize.Prometheus.Selector(cluster); err != nil || sel.String() != want {
			t.Errorf("the selector of cluster %q: %s (%v), want %s", cluster, sel, err, want)
		}
	}
	if Default().Autoresize.Prometheus.ClusterLabelValue != spokes.InClusterName {
		t.Errorf("clusterLabelValue defaults to %q, want %q", Default().Autoresize.Prometheus.ClusterLabelValue, spokes.InClusterName)
	}
}
