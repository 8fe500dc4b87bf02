package main

import (
	"encoding/json"
	"testing"
)

const swagger = `{"definitions": {
 "io.k8s.api.core.v1.ConfigMap": {"type": "object", "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "ConfigMap"}],
  "properties": {"data": {"type": "object", "additionalProperties": {"type": "string"}}, "metadata": {"$ref": "#/definitions/meta"}, "port": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString"}}},
 "meta": {"type": "object", "properties": {"name": {"type": "string"}, "cpu": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"}}},
 "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"type": "string", "format": "int-or-string"},
 "io.k8s.apimachinery.pkg.api.resource.Quantity": {"type": "string"},
 "unused": {"type": "object"}
}}`

func TestOpenAPISchemasAreStandaloneAndStrict(t *testing.T) {
	out := map[string]any{}
	if err := openAPISchemas([]byte(swagger), out); err != nil {
		t.Fatal(err)
	}
	s, ok := out["v1/configmap_v1.json"].(map[string]any)
	if !ok {
		t.Fatalf("schemas written: %v, want v1/configmap_v1.json", keys(out))
	}
	defs := s["definitions"].(map[string]any)
	if defs["meta"] == nil || defs["unused"] != nil {
		t.Errorf("definitions %v: want the referenced ones only", keys(defs))
	}
	cm := defs["io.k8s.api.core.v1.ConfigMap"].(map[string]any)
	if cm["additionalProperties"] != false {
		t.Error("ConfigMap admits unknown fields")
	}
	if data := cm["properties"].(map[string]any)["data"].(map[string]any); data["additionalProperties"] == false {
		t.Error("a map (additionalProperties given) was made strict")
	}
	for _, name := range []string{"io.k8s.apimachinery.pkg.util.intstr.IntOrString", "io.k8s.apimachinery.pkg.api.resource.Quantity"} {
		if _, ok := defs[name].(map[string]any)["oneOf"]; !ok {
			b, _ := json.Marshal(defs[name])
			t.Errorf("%s = %s, want two accepted types", name, b)
		}
	}
}

func TestCRDSchemas(t *testing.T) {
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec:
  group: claimwarden.dev
  names: {kind: VolumeClaimRollout}
  versions:
  - name: v1alpha1
    served: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {a: {type: string}}}
          extra: {type: object, x-kubernetes-preserve-unknown-fields: true, properties: {b: {type: string}}}
`
	out := map[string]any{}
	if err := crdSchemas([]byte(crd), out); err != nil {
		t.Fatal(err)
	}
	s, ok := out["claimwarden.dev/volumeclaimrollout_v1alpha1.json"].(map[string]any)
	if !ok {
		t.Fatalf("schemas written: %v", keys(out))
	}
	props := s["properties"].(map[string]any)
	if props["spec"].(map[string]any)["additionalProperties"] != false || props["extra"].(map[string]any)["additionalProperties"] == false {
		t.Errorf("strictness: spec %v, extra %v", props["spec"], props["extra"])
	}
	if props["kind"] == nil || props["metadata"] == nil {
		t.Error("apiVersion, kind and metadata are not admitted")
	}
}

func keys(m map[string]any) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}
