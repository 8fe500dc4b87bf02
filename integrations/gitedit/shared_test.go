package gitedit

import (
	"strings"
	"testing"
)

// An anchored size that an alias repeats (another template, or a whole
// spec merged into another) is not edited: the one-line edit would grow
// what the alias repeats too.
func TestSetSizeRefusesAnAliasedSize(t *testing.T) {
	for name, src := range map[string]string{
		"scalar": `kind: StatefulSet
metadata: {name: web, namespace: shop}
spec:
  volumeClaimTemplates:
    - metadata: {name: data}
      spec: {resources: {requests: {storage: &size 10Gi}}}
    - metadata: {name: logs}
      spec: {resources: {requests: {storage: *size}}}
`,
		"merged mapping": `kind: StatefulSet
metadata: {name: web, namespace: shop}
spec:
  volumeClaimTemplates:
    - metadata: {name: data}
      spec: &claim
        resources: {requests: {storage: 10Gi}}
    - metadata: {name: logs}
      spec:
        <<: *claim
`,
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := SetSize([]byte(src), web, "20Gi")
			if err == nil || !strings.Contains(err.Error(), "an alias repeats elsewhere") {
				t.Fatalf("got %v, want the alias refused", err)
			}
		})
	}
	// An anchor no alias uses is an ordinary value.
	out, changed, err := SetSize([]byte("kind: StatefulSet\nmetadata: {name: web}\nspec:\n  volumeClaimTemplates:\n    - metadata: {name: data}\n      spec: {resources: {requests: {storage: &size 10Gi}}}\n"), web, "20Gi")
	if err != nil || !changed || !strings.Contains(string(out), "storage: &size 20Gi}") {
		t.Fatalf("an unused anchor: %q, %v, %v", out, changed, err)
	}
}

// A patch whose target may select other StatefulSets (no name, a name
// kustomize reads as a pattern, a label selector) would grow them all: it
// is not edited, and the error says what to change.
func TestSetOverlaySizeRefusesABroadTarget(t *testing.T) {
	patch := "    patch: |-\n      - op: replace\n        path: /spec/volumeClaimTemplates/1/spec/resources/requests/storage\n        value: 10Gi\n"
	for name, target := range map[string]string{
		"kind only":      "{kind: StatefulSet}",
		"a pattern":      "{kind: StatefulSet, name: 'we.*'}",
		"label selector": "{kind: StatefulSet, name: web, labelSelector: tier=db}",
	} {
		t.Run(name, func(t *testing.T) {
			files := overlayFiles("resources: [../../base]\npatches:\n  - target: "+target+"\n"+patch, nil)
			_, err := SetOverlaySize(Overlay{
				Path: "overlays/prod/kustomization.yaml", Kustomization: []byte(files["overlays/prod/kustomization.yaml"]),
				Read: func(p string) ([]byte, error) { return []byte(files[p]), nil },
			}, web, 1, "20Gi")
			if err == nil || !strings.Contains(err.Error(), "its target may select other StatefulSets too") {
				t.Fatalf("got %v, want the broad target refused", err)
			}
		})
	}
}
