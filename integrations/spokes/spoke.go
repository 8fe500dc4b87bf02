package spokes

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// InClusterName is the name of the cluster claimwarden runs in (Argo CD
// names it so too), which no spoke may take.
const InClusterName = "in-cluster"

// InClusterServer is the API server's address inside every cluster: from
// claimwarden's Pod it is the hub, so no spoke may claim it.
const InClusterServer = "https://kubernetes.default.svc"

// Spoke is one cluster claimwarden reaches with a credential the operator
// listed.
type Spoke struct {
	// Name is claimwarden's name for the spoke (metrics labels, logs).
	Name string
	// Server is the API server's URL, without a trailing slash.
	Server string
	// CAData is the PEM CA bundle the server's certificate is verified with;
	// empty for the system's roots.
	CAData []byte
	// Config reaches the spoke; shared, so copy it (rest.CopyConfig)
	// before changing it.
	Config *rest.Config
	// ArgoCDName is the Argo CD cluster Secret's "name", which Application
	// destinations may use instead of the server; "" for a kubeconfig.
	ArgoCDName string
}

// Type is the format of the Secret holding a spoke's credential.
type Type string

const (
	// TypeArgoCD is an Argo CD cluster Secret.
	TypeArgoCD Type = "ArgoCD"
	// TypeKubeconfig is a kubeconfig at one key of a Secret (Flux's
	// kubeConfig.secretRef convention).
	TypeKubeconfig Type = "Kubeconfig"
)

// Types are the Secret formats, in the order error messages list them.
func Types() []Type { return []Type{TypeArgoCD, TypeKubeconfig} }

// Ref is one configured spoke: its name and where its credential is.
type Ref struct {
	Name   string
	Type   Type
	Secret types.NamespacedName
	// Key is the Secret's key holding a kubeconfig; unused for TypeArgoCD.
	Key string
}

// Parser reads the credential of a spoke from its Secret; key is the Ref's.
// Errors name the Secret and the field, never a credential.
type Parser func(secret *corev1.Secret, key string) (argoCDName, server string, cfg *rest.Config, err error)

// ArgoCDParser makes a Parser of a parser of Argo CD cluster Secrets
// (argocd.ClusterSecret), whose keys are fixed.
func ArgoCDParser(parse func(*corev1.Secret) (name, server string, cfg *rest.Config, err error)) Parser {
	return func(secret *corev1.Secret, _ string) (string, string, *rest.Config, error) {
		return parse(secret)
	}
}

// NormalizeServer is server as spokes are looked up by it: without trailing
// slashes, as Argo CD compares destinations.
func NormalizeServer(server string) string { return strings.TrimRight(server, "/") }
