package source_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/source"
)

// Data keys and label of a locatedTool's objects.
const (
	labelDemo     = "demo.example/name" // names the Demo object that applies this
	prefixHolds   = "holds."            // holds.<name>: its record holds StatefulSet <name>
	prefixApplies = "applies."          // applies.<name>: it applies the Demo object <name>
	keyBranch     = "branch"
	keyPath       = "path"
	keyValues     = "values" // set: the object sets values in its own manifest
)

// locatedTool is configMapTool with what autoresize asks of a tool: which
// object applies a StatefulSet at rest, where Git holds an object, and
// which object applies another (a Parent, as an Application applies an
// Application).
type locatedTool struct{ *configMapTool }

var _ source.Parent = locatedTool{}
var _ source.Locator = locatedTool{}

func (locatedTool) Names(live metav1.Object) (types.NamespacedName, bool) {
	n := live.GetLabels()[labelDemo]
	return types.NamespacedName{Namespace: live.GetNamespace(), Name: n}, n != ""
}

func (t locatedTool) ManagesAtRest(ctx context.Context, obj client.Object, cluster string, live *appsv1.StatefulSet) error {
	if c := obj.(*corev1.ConfigMap).Data[keyCluster]; c != cluster {
		return fmt.Errorf("it applies to cluster %q, not %q", c, cluster)
	}
	if err := t.Manages(ctx, obj, live); err != nil {
		return err
	}
	if _, ok := obj.(*corev1.ConfigMap).Data[prefixHolds+live.Name]; !ok {
		return fmt.Errorf("its record holds no StatefulSet %s", live.Name)
	}
	return nil
}

func (locatedTool) Applies(_ context.Context, parent client.Object, _ schema.GroupKind, obj metav1.Object) error {
	if _, ok := parent.(*corev1.ConfigMap).Data[prefixApplies+obj.GetName()]; !ok {
		return fmt.Errorf("its record holds no %s", obj.GetName())
	}
	return nil
}

func (locatedTool) LocateSource(_ context.Context, obj client.Object) (source.Where, error) {
	data := obj.(*corev1.ConfigMap).Data
	return source.Where{Repository: toolRepository, Branch: data[keyBranch], Dir: source.RepoPath(data[keyPath])}, nil
}

func (t locatedTool) Locate(ctx context.Context, obj client.Object, parents source.Parents) (source.Where, error) {
	w, err := t.LocateSource(ctx, obj)
	if err != nil || obj.(*corev1.ConfigMap).Data[keyValues] == "" {
		return w, err
	}
	m, ok, err := parents(ctx, obj, schema.GroupKind{Kind: toolKind})
	if err != nil || !ok {
		return w, err
	}
	m.Inline = &source.Inline{Kind: toolKind, Namespace: obj.GetNamespace(), Name: obj.GetName(), Field: []string{"data", keyValues}}
	return m.ChartIn(w), nil
}

// A StatefulSet at rest is the object's that it names only when that
// object's own record holds it; the error says which object it named.
// A StatefulSet that names none is no tool's. On a real API server.
func TestRegistryAppliedBy(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var tools source.Registry
	tools.Know(locatedTool{f.tool})
	f.set(map[string]string{prefixHolds + "web": "", keyAccount: "deployer"})
	named := func(name, demo string) *appsv1.StatefulSet {
		s := desiredStatefulSet("shop", name, "1Gi")
		s.Labels = map[string]string{labelDemo: demo}
		return s
	}

	a, ok, err := tools.AppliedBy(ctx, f.c, "", named("web", "demo"))
	if !ok || err != nil || a.Source.Kind != toolKind || a.Source.Namespace != "shop" || a.Source.Name != "demo" ||
		a.Authority == nil || a.Authority.User != "system:serviceaccount:shop:deployer" || a.Object == nil || a.Object.GetName() != "demo" {
		t.Errorf("web, which the record holds: %+v, %v, %v; want Demo shop/demo as shop's deployer, with the object read", a, ok, err)
	}
	_, ok, err = tools.AppliedBy(ctx, f.c, "", named("cache", "demo"))
	if want := "it names Demo shop/demo, which does not apply it: its record holds no StatefulSet cache"; !ok || err == nil || err.Error() != want {
		t.Errorf("cache, which the record does not hold: %v, %v; want %q", ok, err, want)
	}
	_, ok, err = tools.AppliedBy(ctx, f.c, "", named("web", "gone"))
	if !ok || !apierrors.IsNotFound(err) || !strings.HasPrefix(err.Error(), "it names Demo shop/gone: ") {
		t.Errorf("web naming a missing object: %v, %v; want NotFound, naming it", ok, err)
	}
	if _, ok, err := tools.AppliedBy(ctx, f.c, "", desiredStatefulSet("shop", "web", "1Gi")); ok || err != nil {
		t.Errorf("web naming nothing: %v, %v; want no tool's", ok, err)
	}
	_, ok, err = tools.AppliedBy(ctx, f.c, "eu", named("web", "demo"))
	if want := `it names Demo shop/demo, which does not apply it: it applies to cluster "", not "eu"`; !ok || err == nil || err.Error() != want {
		t.Errorf("web read in cluster eu, which the object does not apply to: %v, %v; want %q", ok, err, want)
	}
}

// A tool object that sets values in its own manifest is located where the
// parent that applies it reads from, the chart where it reads from itself;
// a parent whose record does not hold it is refused. Only a Locator of
// the kind locates. On a real API server.
func TestRegistryLocatesThroughParents(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var tools source.Registry
	tools.Know(locatedTool{f.tool})
	f.set(map[string]string{prefixApplies + "child": "", keyBranch: "main", keyPath: "./clusters/prod"})
	for _, name := range []string{"child", "stray"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: map[string]string{labelDemo: "demo"}},
			Data: map[string]string{keyValues: "size: 1Gi", keyBranch: "charts", keyPath: "charts/web"}}
		if err := f.c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	l, ok := tools.Locator(toolKind)
	if !ok {
		t.Fatal("the registry has no locator of Demo objects")
	}
	locate := func(name string) (source.Where, error) {
		obj := l.NewObject()
		if err := f.c.Get(ctx, types.NamespacedName{Namespace: "shop", Name: name}, obj); err != nil {
			t.Fatal(err)
		}
		return l.Locate(ctx, obj, tools.Parents(f.c))
	}

	got, err := locate("child")
	if err != nil || got.Branch != "main" || got.Dir != "clusters/prod" || got.ChartBranch != "charts" || got.Inline == nil || got.Inline.Name != "child" {
		t.Errorf("child: %+v, %v; want its manifest in the parent's main:clusters/prod, its chart on branch charts", got, err)
	}
	if _, err := locate("stray"); err == nil || !strings.HasPrefix(err.Error(), "Demo shop/stray names Demo shop/demo, which does not apply it: ") {
		t.Errorf("stray, which the parent does not apply: %v, want refused", err)
	}
	if _, ok := tools.Locator("Other"); ok {
		t.Error("a Locator of a kind no tool has")
	}
	var plain source.Registry
	plain.Know(f.tool)
	if _, ok := plain.Locator(toolKind); ok || len(plain.AtRest()) != 0 {
		t.Error("a tool that is no Locator or AtRest is asked to locate")
	}
}
