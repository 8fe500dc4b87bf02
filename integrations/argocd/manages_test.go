package argocd

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/claimwarden/claimwarden/reconciler/outcome"
)

// objectFrom parses a Kubernetes object written as YAML.
func objectFrom(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// argoCD is an Argo CD control plane in namespace argocd as the API server
// serves it: argocd-cm with data, and the AppProjects.
func argoCD(t *testing.T, data map[string]string, projects ...string) *Applications {
	t.Helper()
	objs := []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "argocd-cm"}, Data: data}}
	for _, p := range projects {
		objs = append(objs, objectFrom(t, p))
	}
	reader := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(objs...).Build()
	apps := NewApplications(reader, nil, outcome.Recorder{}, false, "argocd")
	apps.clusters = []Cluster{euSpoke}
	return apps
}

// euSpoke is a spoke the operator configured, as Argo CD's cluster Secret
// names it "prod-eu".
var euSpoke = Cluster{Name: "eu", Server: "https://eu.example:6443", ArgoCDName: "prod-eu"}

// fleetProject lets Applications in argocd apply to shop of the spoke
// prod-eu only, impersonating eu-deployer there (its entry matched by the
// spoke's server).
const fleetProject = `
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {namespace: argocd, name: fleet}
spec:
  destinations:
  - {name: prod-eu, namespace: shop}
  destinationServiceAccounts:
  - {server: 'https://eu.example:6443', namespace: shop, defaultServiceAccount: eu-deployer}
`

// shopProject lets Applications in argocd and team-* apply to shop and
// team-shop of this cluster, impersonating deployer.
const shopProject = `
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {namespace: argocd, name: shop}
spec:
  sourceNamespaces: [team-*]
  destinations:
  - {server: https://kubernetes.default.svc, namespace: shop}
  - {name: in-cluster, namespace: team-shop}
  destinationServiceAccounts:
  - {server: https://kubernetes.default.svc, namespace: shop, defaultServiceAccount: deployer}
`

func shopApp(t *testing.T, namespace, project, destination string) *unstructured.Unstructured {
	t.Helper()
	return objectFrom(t, `
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {namespace: `+namespace+`, name: shop}
spec:
  project: `+project+`
  destination: `+destination+`
  source: {repoURL: "https://git.example/shop.git", path: ., targetRevision: main}
`)
}

func TestManages(t *testing.T) {
	const (
		local   = "{server: https://kubernetes.default.svc, namespace: shop}"
		trackID = "argocd.argoproj.io/tracking-id"
	)
	ctx := context.Background()
	tracking := func(id string) map[string]string { return map[string]string{trackID: id} }
	for _, tc := range []struct {
		name        string
		data        map[string]string
		app         *unstructured.Unstructured
		annotations map[string]string
		namespace   string // of the live StatefulSet web
		want        string // part of the refusal; "" when managed
	}{
		{name: "managed", app: shopApp(t, "argocd", "shop", local), annotations: tracking("shop:apps/StatefulSet:shop/web"), namespace: "shop"},
		{name: "managed by an Application in a source namespace", app: shopApp(t, "team-a", "shop", "{name: in-cluster, namespace: team-shop}"),
			annotations: tracking("team-a_shop:apps/StatefulSet:team-shop/web"), namespace: "team-shop"},
		{name: "not tracked: the desired state's annotation does not count", app: shopApp(t, "argocd", "shop", local), namespace: "shop",
			want: "carries no Argo CD tracking-id"},
		{name: "another Application's", app: shopApp(t, "argocd", "shop", local), annotations: tracking("bank:apps/StatefulSet:shop/web"), namespace: "shop",
			want: `names Application "bank"`},
		{name: "outside the project's destinations", app: shopApp(t, "argocd", "shop", local), annotations: tracking("shop:apps/StatefulSet:bank/web"), namespace: "bank",
			want: "AppProject shop has no destination for namespace bank"},
		{name: "an Application of a cluster nobody configured", app: shopApp(t, "argocd", "shop", "{server: https://prod.example, namespace: shop}"),
			annotations: tracking("shop:apps/StatefulSet:shop/web"), namespace: "shop", want: "cluster https://prod.example, which is not one claimwarden is configured for"},
		{name: "on a configured spoke its project permits", app: shopApp(t, "argocd", "fleet", "{name: prod-eu, namespace: shop}"),
			annotations: tracking("shop:apps/StatefulSet:shop/web"), namespace: "shop"},
		{name: "on a configured spoke by server", app: shopApp(t, "argocd", "fleet", "{server: 'https://eu.example:6443', namespace: shop}"),
			annotations: tracking("shop:apps/StatefulSet:shop/web"), namespace: "shop"},
		{name: "on a configured spoke its project does not permit", app: shopApp(t, "argocd", "shop", "{name: prod-eu, namespace: shop}"),
			annotations: tracking("shop:apps/StatefulSet:shop/web"), namespace: "shop", want: "AppProject shop has no destination for namespace shop of https://eu.example:6443"},
		{name: "on a spoke, in a namespace its project does not permit there", app: shopApp(t, "argocd", "fleet", "{name: prod-eu, namespace: bank}"),
			annotations: tracking("shop:apps/StatefulSet:bank/web"), namespace: "bank", want: "AppProject fleet has no destination for namespace bank of https://eu.example:6443"},
		{name: "a namespace the project does not take Applications from", app: shopApp(t, "bank", "shop", local),
			annotations: tracking("bank_shop:apps/StatefulSet:shop/web"), namespace: "shop", want: "does not allow Applications in namespace bank"},
		{name: "no such project", app: shopApp(t, "argocd", "bank", local), annotations: tracking("shop:apps/StatefulSet:shop/web"), namespace: "shop",
			want: "reading AppProject argocd/bank"},
		{name: "label tracking", data: map[string]string{"application.resourceTrackingMethod": "label"}, app: shopApp(t, "argocd", "shop", local),
			annotations: tracking("shop:apps/StatefulSet:shop/web"), namespace: "shop", want: "label tracking"},
		{name: "global projects", data: map[string]string{"globalProjects": "- projectName: base\n"}, app: shopApp(t, "argocd", "shop", local),
			annotations: tracking("shop:apps/StatefulSet:shop/web"), namespace: "shop", want: "global projects"},
		{name: "another installation's", data: map[string]string{"installationID": "eu-1"}, app: shopApp(t, "argocd", "shop", local),
			annotations: tracking("shop:apps/StatefulSet:shop/web"), namespace: "shop", want: `installation ID "eu-1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := tracked(tc.annotations)
			live.Namespace = tc.namespace
			err := argoCD(t, tc.data, shopProject, fleetProject).Manages(ctx, tc.app, live)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Manages = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestManagesWithoutSettings(t *testing.T) {
	reader := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(objectFrom(t, shopProject)).Build()
	live := tracked(map[string]string{"argocd.argoproj.io/tracking-id": "shop:apps/StatefulSet:shop/web"})
	err := NewApplications(reader, nil, outcome.Recorder{}, false, "argocd").Manages(context.Background(), shopApp(t, "argocd", "shop", "{server: https://kubernetes.default.svc, namespace: shop}"), live)
	if err == nil || !strings.Contains(err.Error(), "argocd/argocd-cm") {
		t.Errorf("Manages without argocd-cm = %v, want a refusal naming it", err)
	}
}

// An Application applies another (app of apps) as it applies a
// StatefulSet: the child's tracking-id names the parent and the child as
// an argoproj.io/Application, and the parent's project permits that kind
// in the child's namespace.
func TestAppliesAnApplication(t *testing.T) {
	const rootProject = `
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {namespace: argocd, name: root}
spec:
  destinations: [{server: https://kubernetes.default.svc, namespace: argocd}]
`
	ctx := context.Background()
	root := shopApp(t, "argocd", "root", "{server: https://kubernetes.default.svc, namespace: argocd}")
	root.SetName("root")
	gk := ApplicationGVK.GroupKind()
	for _, tc := range []struct {
		name, id, project, want string
	}{
		{name: "applied", id: "root:argoproj.io/Application:argocd/shop", project: rootProject},
		{name: "tracked as a StatefulSet", id: "root:apps/StatefulSet:argocd/shop", project: rootProject, want: "names another resource"},
		{name: "another parent", id: "other:argoproj.io/Application:argocd/shop", project: rootProject, want: `names Application "other"`},
		{name: "kind not permitted", id: "root:argoproj.io/Application:argocd/shop",
			project: strings.Replace(rootProject, "spec:", "spec:\n  namespaceResourceWhitelist: [{group: apps, kind: StatefulSet}]", 1),
			want:    "does not permit argoproj.io/Application"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			child := shopApp(t, "argocd", "shop", "{server: https://kubernetes.default.svc, namespace: shop}")
			child.SetAnnotations(map[string]string{"argocd.argoproj.io/tracking-id": tc.id})
			err := argoCD(t, nil, tc.project).Applies(ctx, root, gk, child)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Applies = %v, want %q", err, tc.want)
			}
		})
	}
}

// At rest (autoresize) a StatefulSet is the Application's only in the
// cluster of its destination: the spoke's StatefulSet, not its namesake
// in claimwarden's own cluster whose writer copied the tracking-id; and
// a local Application applies nothing of the spoke.
func TestManagesAtRestInItsCluster(t *testing.T) {
	live := tracked(map[string]string{"argocd.argoproj.io/tracking-id": "shop:apps/StatefulSet:shop/web"})
	live.Namespace = "shop"
	a := argoCD(t, nil, shopProject, fleetProject)
	ctx := context.Background()
	spoke := shopApp(t, "argocd", "fleet", "{name: prod-eu, namespace: shop}")
	if err := a.ManagesAtRest(ctx, spoke, euSpoke.Name, live); err != nil {
		t.Errorf("the spoke's StatefulSet: %v, want managed", err)
	}
	err := a.ManagesAtRest(ctx, spoke, "", live)
	if want := "the Application argocd/shop applies to cluster " + euSpoke.Name + ", not the cluster claimwarden runs in"; err == nil || err.Error() != want {
		t.Errorf("its namesake in claimwarden's own cluster: %v, want %q", err, want)
	}
	local := shopApp(t, "argocd", "shop", "{server: https://kubernetes.default.svc, namespace: shop}")
	err = a.ManagesAtRest(ctx, local, euSpoke.Name, live)
	if want := "the Application argocd/shop applies to the cluster claimwarden runs in, not cluster " + euSpoke.Name; err == nil || err.Error() != want {
		t.Errorf("a local Application, the StatefulSet read in the spoke: %v, want %q", err, want)
	}
}

// A parent Application's children are read in the cluster claimwarden
// runs in: an Application of a spoke applies none of those, whatever
// tracking-id a writer of the object copied onto it.
func TestAppliesAtRestIsThisClusterOnly(t *testing.T) {
	live := tracked(map[string]string{"argocd.argoproj.io/tracking-id": "shop:apps/StatefulSet:shop/web"})
	live.Namespace = "shop"
	app := shopApp(t, "argocd", "fleet", "{name: prod-eu, namespace: shop}")
	err := argoCD(t, nil, fleetProject).Applies(context.Background(), app, schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, live)
	if err == nil || !strings.Contains(err.Error(), "applies to cluster prod-eu (https://eu.example:6443), not this one") {
		t.Errorf("Applies of a spoke's Application to a local object = %v, want a refusal naming the spoke", err)
	}
}
