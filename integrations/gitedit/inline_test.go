package gitedit

import (
	"errors"
	"strings"
	"testing"
)

// A HelmRelease manifest beside another document: the value of its
// spec.values that sets the primary's size is edited in place, every other
// line kept.
const helmReleaseManifest = `apiVersion: v1
kind: ConfigMap
metadata: {name: pg}
data: {size: 10Gi}
---
# the database
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: pg
spec:
  chart: {spec: {chart: ./db}}
  values:
    primary:
      persistence:
        size: 10Gi # grows with the shop
    replica: {persistence: {size: 10Gi}, note: keep}
`

var pgRelease = Inline{Kind: "HelmRelease", Namespace: "shop", Name: "pg", Field: []string{"spec", "values"}}

func TestSetInlineValuesSize(t *testing.T) {
	out, changed, err := SetInlineValuesSize(t.Context(), release(t, ""), []byte(helmReleaseManifest), pgRelease, primary, "20Gi", "")
	want := strings.Replace(helmReleaseManifest, "size: 10Gi # grows", "size: 20Gi # grows", 1)
	if err != nil || !changed || string(out) != want {
		t.Fatalf("SetInlineValuesSize = %v, %v:\n%s\nwant\n%s", changed, err, out, want)
	}
	// The replica's value sits in a flow mapping, and only it moves the replica.
	out, _, err = SetInlineValuesSize(t.Context(), release(t, ""), []byte(helmReleaseManifest), pgRelease,
		Target{Namespace: "shop", StatefulSet: "pg-replica", Template: "data"}, "20Gi", "")
	if want := strings.Replace(helmReleaseManifest, "{size: 10Gi}, note", "{size: 20Gi}, note", 1); err != nil || string(out) != want {
		t.Errorf("the replica: %v:\n%s", err, out)
	}
	if _, changed, err := SetInlineValuesSize(t.Context(), release(t, ""), []byte(helmReleaseManifest), pgRelease, primary, "10Gi", ""); err != nil || changed {
		t.Errorf("at its size already: changed %v, %v", changed, err)
	}
}

// Where the mapping does not set the size (it comes from the chart or a
// values file), or the document is not there, the error says so and wraps
// ErrNotSet: the caller edits the values files instead.
func TestSetInlineValuesSizeNotSet(t *testing.T) {
	for what, c := range map[string]struct {
		in   Inline
		held bool
	}{
		"another name":  {in: Inline{Kind: "HelmRelease", Namespace: "shop", Name: "other", Field: pgRelease.Field}},
		"no such field": {in: Inline{Kind: "HelmRelease", Namespace: "shop", Name: "pg", Field: []string{"spec", "valuesObject"}}, held: true},
	} {
		_, _, err := SetInlineValuesSize(t.Context(), release(t, ""), []byte(helmReleaseManifest), c.in, primary, "20Gi", "")
		if !errors.Is(err, ErrNotSet) || errors.Is(err, ErrNotHeld) == c.held {
			t.Errorf("%s: %v, want ErrNotSet (the file holds it: %v)", what, err, c.held)
		}
	}
	namespaced := strings.Replace(helmReleaseManifest, "  name: pg\n", "  name: pg\n  namespace: shop\n", 1)
	bank := Inline{Kind: "HelmRelease", Namespace: "bank", Name: "pg", Field: pgRelease.Field}
	if _, _, err := SetInlineValuesSize(t.Context(), release(t, ""), []byte(namespaced), bank, primary, "20Gi", ""); !errors.Is(err, ErrNotHeld) {
		t.Errorf("another namespace: %v, want ErrNotSet", err)
	}
	logsOnly := strings.Replace(helmReleaseManifest, "size: 10Gi # grows", "other: 10Gi # grows", 1)
	_, _, err := SetInlineValuesSize(t.Context(), release(t, ""), []byte(logsOnly), pgRelease, primary, "20Gi", "")
	if !errors.Is(err, ErrNotSet) || !strings.Contains(err.Error(), "HelmRelease shop/pg's spec.values sets its size 8Gi") {
		t.Errorf("values that do not set it: %v", err)
	}
	twice := helmReleaseManifest + "---\n" + helmReleaseManifest[strings.Index(helmReleaseManifest, "apiVersion: helm"):]
	if _, _, err := SetInlineValuesSize(t.Context(), release(t, ""), []byte(twice), pgRelease, primary, "20Gi", ""); err == nil || errors.Is(err, ErrNotSet) {
		t.Errorf("two HelmReleases pg: %v, want refused", err)
	}
}

// Values under and over the edited ones render as the tool merges them: a
// value the later layer sets is not the edited file's to change.
func TestSetValuesSizeInLayers(t *testing.T) {
	r := release(t, "primary: {persistence: {size: 10Gi}}\n")
	r.Over = [][]byte{[]byte("primary: {persistence: {size: 12Gi}}\n")}
	if _, _, err := SetValuesSize(t.Context(), r, primary, "20Gi", ""); !errors.Is(err, ErrNotSet) {
		t.Errorf("a size set over the file: %v, want ErrNotSet", err)
	}
	r = release(t, "primary: {persistence: {size: 10Gi}}\n")
	r.Under = [][]byte{[]byte("logs: {size: 10Gi}\n")}
	r.Over = [][]byte{[]byte("replica: {persistence: {size: 2Gi}}\n")}
	out, changed, err := SetValuesSize(t.Context(), r, primary, "20Gi", "")
	if err != nil || !changed || string(out) != "primary: {persistence: {size: 20Gi}}\n" {
		t.Errorf("layers that leave the file's value in force: %q, %v, %v", out, changed, err)
	}
}

// An Application's helm.values is YAML in a literal block: the value is
// found in it and edited where its text is in the manifest.
func TestSetInlineValuesSizeInALiteralBlock(t *testing.T) {
	const app = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: pg, namespace: argocd}
spec:
  source:
    helm:
      values: |
        # the shop's database
        primary:
          persistence: {size: 10Gi}
        replica:
          persistence:
            size: 10Gi
`
	in := Inline{Kind: "Application", Namespace: "argocd", Name: "pg", Field: []string{"spec", "source", "helm", "values"}}
	out, changed, err := SetInlineValuesSize(t.Context(), release(t, ""), []byte(app), in, primary, "20Gi", "")
	if want := strings.Replace(app, "{size: 10Gi}", "{size: 20Gi}", 1); err != nil || !changed || string(out) != want {
		t.Errorf("SetInlineValuesSize = %v, %v:\n%s\nwant\n%s", changed, err, out, want)
	}
	indicated := strings.Replace(app, "values: |", "values: |2", 1)
	if _, _, err := SetInlineValuesSize(t.Context(), release(t, ""), []byte(indicated), in, primary, "20Gi", ""); err == nil || !strings.Contains(err.Error(), "indentation indicator") {
		t.Errorf("a block with an indentation indicator: %v, want refused", err)
	}
}
