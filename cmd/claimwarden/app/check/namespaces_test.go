package check

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/policies"
)

// expandable lets the shipped expansion-allowed policy allow growth.
const expandable = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\nprovisioner: csi.example.com\nallowVolumeExpansion: true\n"

// dbIn is StatefulSet db of two replicas and one template of size, in
// namespace ns, or naming none when ns is "".
func dbIn(ns, size string) string {
	meta := "metadata:\n  name: db\n"
	if ns != "" {
		meta += "  namespace: " + ns + "\n"
	}
	return "---\napiVersion: apps/v1\nkind: StatefulSet\n" + meta + `spec:
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: c, image: x}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], storageClassName: fast, resources: {requests: {storage: ` + size + `}}}
`
}

// writeTemp writes text to name in a new directory and returns its path.
func writeTemp(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// shippedPolicies are the controller's shipped policies alone.
func shippedPolicies(t *testing.T) policies.Evaluator {
	t.Helper()
	engine, err := policies.New(context.Background(), policies.Options{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(engine.Stop)
	return engine
}

// deniedByMaxStep fails the test unless r checked shop/db as changed and
// max-step denied its claims.
func deniedByMaxStep(t *testing.T, r *Report) {
	t.Helper()
	if len(r.StatefulSets) != 1 {
		t.Fatalf("StatefulSets %+v, want shop/db alone", r.StatefulSets)
	}
	st := r.StatefulSets[0]
	if st.Namespace != "shop" || st.Name != "db" || st.Status != StatusChanged || st.Verdict != Denied || len(st.Claims) != 2 {
		t.Fatalf("%s/%s: status %s, verdict %s, %d claims; want shop/db changed, denied, 2 claims", st.Namespace, st.Name, st.Status, st.Verdict, len(st.Claims))
	}
	for _, c := range st.Claims {
		if c.From != "10Gi" || c.To != "40Gi" || c.Verdict != Denied || len(c.Denials) == 0 || c.Denials[0].Policy != "max-step" {
			t.Errorf("claim %s: %s → %s %s %+v, want 10Gi → 40Gi denied by max-step", c.Name, c.From, c.To, c.Verdict, c.Denials)
		}
	}
}

// A pull request that drops metadata.namespace from shop/db: +300% would
// pass as a "new" default/db. It is an input error naming both
// namespaces, both places and the flags that say what the tool does.
func TestDroppedNamespaceIsAnError(t *testing.T) {
	base := writeTemp(t, "base.yaml", expandable+dbIn("shop", "10Gi"))
	pr := writeTemp(t, "db.yaml", dbIn("", "40Gi"))
	_, err := Run(context.Background(), Options{Files: []string{pr}, Base: []string{base}, Policies: shippedPolicies(t)})
	want := "StatefulSet db moves from namespace shop to namespace default: the base has shop/db (" + base + ":7), " +
		"the proposal default/db instead (" + pr + ":2, which names no namespace and so gets --namespace default). " +
		"If the GitOps tool applies it into one namespace, give --namespace shop (kubectl -n, an Argo CD Application's spec.destination.namespace) " +
		"or --target-namespace shop (a Flux Kustomization's spec.targetNamespace); " +
		"if the StatefulSet does move, give --allow-namespace-move and it is checked as new"
	if err == nil || err.Error() != want {
		t.Errorf("Run = %v\nwant the error\n%s", err, want)
	}
}

// The namespace the GitOps tool applies brings the StatefulSet back into
// shop, where the change is checked and max-step denies it.
func TestNamespaceAsTheToolApplies(t *testing.T) {
	ctx := context.Background()
	engine := shippedPolicies(t)
	base := writeTemp(t, "base.yaml", expandable+dbIn("shop", "10Gi"))
	for _, c := range []struct {
		name string
		pr   string
		base string
		o    Options
	}{
		// kubectl -n shop, an Argo CD Application's destination.namespace.
		{"--namespace", dbIn("", "40Gi"), base, Options{Namespace: "shop"}},
		// A Flux Kustomization's targetNamespace sets what a manifest names.
		{"--target-namespace over a dropped namespace", dbIn("", "40Gi"), base, Options{TargetNamespace: "shop"}},
		{"--target-namespace over another namespace", dbIn("staging", "40Gi"), base, Options{Namespace: "staging", TargetNamespace: "shop"}},
		// The base is what the same tool applied: its namespace is set too.
		{"--target-namespace over the base's", dbIn("", "40Gi"), writeTemp(t, "base.yaml", expandable+dbIn("elsewhere", "10Gi")), Options{TargetNamespace: "shop"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.Files, o.Base, o.Policies = []string{writeTemp(t, "db.yaml", c.pr)}, []string{c.base}, engine
			r, err := Run(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			deniedByMaxStep(t, r)
		})
	}
}

// A kustomize build gets the target namespace too, as Flux gives it.
func TestTargetNamespaceOfKustomizeBuild(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [db.yaml]\n",
		"db.yaml":            dbIn("", "40Gi"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	base := writeTemp(t, "base.yaml", expandable+dbIn("shop", "10Gi"))
	r, err := Run(context.Background(), Options{Kustomizations: []string{dir}, Base: []string{base}, TargetNamespace: "shop", Policies: shippedPolicies(t)})
	if err != nil {
		t.Fatal(err)
	}
	deniedByMaxStep(t, r)
}

// Asked for, a move is checked as it is: new in its namespace.
func TestAllowNamespaceMove(t *testing.T) {
	base := writeTemp(t, "base.yaml", expandable+dbIn("shop", "10Gi"))
	pr := writeTemp(t, "db.yaml", dbIn("", "40Gi"))
	r, err := Run(context.Background(), Options{Files: []string{pr}, Base: []string{base}, AllowNamespaceMove: true, Policies: shippedPolicies(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.StatefulSets) != 1 || r.StatefulSets[0].Namespace != "default" || r.StatefulSets[0].Status != StatusNew {
		t.Errorf("StatefulSets %+v, want default/db new", r.StatefulSets)
	}
}

// TestNamespaceMoves holds the rule: a StatefulSet new in its namespace
// while the current state has one of its name in a namespace the proposal
// lacks it in.
func TestNamespaceMoves(t *testing.T) {
	at := func(keys ...string) map[string]placement {
		m := map[string]placement{}
		for _, k := range keys {
			ns, name, _ := strings.Cut(k, "/")
			m[k] = placement{namespace: ns, name: name}
		}
		return m
	}
	proposed := func(keys ...string) []proposal {
		var out []proposal
		for i, k := range keys {
			ns, name, _ := strings.Cut(k, "/")
			out = append(out, proposal{namespace: ns, name: name, Location: manifests.Location{File: "pr.yaml", Line: i + 1}})
		}
		return out
	}
	for _, c := range []struct {
		name     string
		current  map[string]placement
		proposed []proposal
		want     []string // in the error, which is nil when empty
	}{
		{"moves", at("shop/db"), proposed("default/db"), []string{"moves from namespace shop to namespace default: the cluster has shop/db, the proposal default/db instead (pr.yaml:1)", "--target-namespace shop"}},
		{"unchanged place", at("shop/db"), proposed("shop/db"), nil},
		{"a copy in another namespace", at("shop/db"), proposed("shop/db", "staging/db"), nil},
		{"another name", at("shop/db"), proposed("default/web"), nil},
		{"into a namespace that has one already", at("shop/db", "default/db"), proposed("default/db"), nil},
		{"new everywhere", nil, proposed("default/db"), nil},
		{"of several, the first namespace by name", at("b/db", "a/db", "c/db"), proposed("z/db"), []string{"from namespace a to namespace z", "and 2 more of that name in other namespaces"}},
		{"each move", at("a/db", "a/web"), proposed("b/db", "b/web"), []string{"StatefulSet db moves", "StatefulSet web moves"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := namespaceMoves(c.current, c.proposed, "the cluster")
			if len(c.want) == 0 {
				if err != nil {
					t.Errorf("namespaceMoves = %v, want nil", err)
				}
				return
			}
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("namespaceMoves = %v, want an error saying %q", err, w)
				}
			}
		})
	}
}

// TestNamespacesOfKinds: a namespaced object naming none gets the
// fallback, every one the target when set; cluster-scoped ones (known by
// group and kind) never get one.
func TestNamespacesOfKinds(t *testing.T) {
	objs, err := manifests.Decode(strings.NewReader(expandable+`---
apiVersion: v1
kind: Namespace
metadata: {name: payments}
---
apiVersion: storage.k8s.io/v1beta1
kind: VolumeAttributesClass
metadata: {name: gold}
driverName: csi.example.com
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: named, namespace: payments}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: unnamed}
---
apiVersion: example.com/v1
kind: StorageClass
metadata: {name: namespaced-lookalike}
`), "objs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n    namespacing
		want []string // the namespaces, in order
	}{
		{namespacing{fallback: "shop"}, []string{"", "", "", "payments", "shop", "shop"}},
		{namespacing{fallback: "shop", target: "prod"}, []string{"", "", "", "prod", "prod", "prod"}},
	} {
		var got []string
		for _, o := range objs {
			o := manifests.Object{Unstructured: o.DeepCopy(), Location: o.Location}
			c.n.apply(o)
			got = append(got, o.GetNamespace())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%+v: namespaces %q, want %q", c.n, got, c.want)
		}
	}
	// And the Namespace keeps its name.
	o := manifests.Object{Unstructured: objs[1].DeepCopy()}
	if (namespacing{target: "prod"}).apply(o); o.GetName() != "payments" || o.GetNamespace() != "" {
		t.Errorf("Namespace %s/%s, want payments untouched", o.GetNamespace(), o.GetName())
	}
}

func TestNamespaceOptionsAreNamespaceNames(t *testing.T) {
	pr := writeTemp(t, "db.yaml", dbIn("", "40Gi"))
	base := writeTemp(t, "base.yaml", expandable+dbIn("shop", "10Gi"))
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{TargetNamespace: "Shop"}, `--target-namespace "Shop" is not a namespace name: a lowercase RFC 1123 label`},
		{Options{TargetNamespace: "shop/db"}, `--target-namespace "shop/db" is not a namespace name`},
		{Options{TargetNamespace: strings.Repeat("a", 64)}, "must be no more than 63 characters"},
		{Options{Namespace: "shop_1"}, `--namespace "shop_1" is not a namespace name`},
	} {
		c.o.Files, c.o.Base, c.o.Policies = []string{pr}, []string{base}, shippedPolicies(t)
		if _, err := Run(context.Background(), c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Run(%q, %q) = %v, want an error saying %q", c.o.Namespace, c.o.TargetNamespace, err, c.want)
		}
	}
}

// The move's message names the flag that fits where each namespace came
// from: a base StatefulSet naming none got --namespace too.
func TestMoveErrorNamesTheFittingFlag(t *testing.T) {
	p := proposal{namespace: "shop", name: "db", Location: manifests.Location{File: "db.yaml", Line: 3}}
	c := placement{namespace: "default", name: "db", Location: manifests.Location{File: "base.yaml", Line: 1}, namespaceFrom: fromFallback}
	got := moveError(p, c, 0, "the base").Error()
	for _, want := range []string{"the base has default/db (base.yaml:1, which names no namespace and so gets --namespace default)", "the proposal shop/db instead (db.yaml:3)", "give --namespace shop (kubectl -n"} {
		if !strings.Contains(got, want) {
			t.Errorf("moveError = %s\nwant it to say %q", got, want)
		}
	}
	p.namespaceFrom, c.namespaceFrom = fromTarget, fromManifest
	if got := moveError(p, c, 0, "the cluster").Error(); !strings.Contains(got, "(db.yaml:3, which --target-namespace puts into shop)") || strings.Contains(got, "--namespace ") {
		t.Errorf("moveError = %s\nwant it to say --target-namespace put it into shop, and offer no --namespace", got)
	}
}
