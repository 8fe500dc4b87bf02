package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// schemasCmd writes one JSON schema per kind for kubeconform, at
// <group>/<kind>_<version>.json (the group of the core API is "v1"), matching
// kubeconform's -schema-location '<dir>/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json'.
// Strict: an object with properties admits no others, so a misspelt field
// fails (as `kubectl apply --validate=strict` would).
func schemasCmd(args []string) error {
	fs := flag.NewFlagSet("schemas", flag.ContinueOnError)
	openapi := fs.String("openapi", "", "Kubernetes swagger.json (k8s.io/kubernetes/api/openapi-spec)")
	out := fs.String("out", "", "directory written")
	var crds multiFlag
	fs.Var(&crds, "crd", "CustomResourceDefinition YAML file (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || (*openapi == "" && len(crds) == 0) {
		return fmt.Errorf("-out and -openapi or -crd are required")
	}
	schemas := map[string]any{}
	if *openapi != "" {
		data, err := os.ReadFile(*openapi)
		if err != nil {
			return err
		}
		if err := openAPISchemas(data, schemas); err != nil {
			return fmt.Errorf("%s: %w", *openapi, err)
		}
	}
	for _, f := range crds {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := crdSchemas(data, schemas); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	for path, s := range schemas {
		data, err := json.Marshal(s)
		if err != nil {
			return err
		}
		p := filepath.Join(*out, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func schemaPath(group, version, kind string) string {
	if group == "" {
		group = version
	}
	return group + "/" + strings.ToLower(kind) + "_" + version + ".json"
}

// openAPISchemas adds a standalone schema for every kind of a Swagger 2
// document: the kind's definition with the definitions it refers to,
// transitively, under "definitions".
func openAPISchemas(data []byte, into map[string]any) error {
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	for name, def := range doc.Definitions {
		gvks, _ := def["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			gvk, _ := g.(map[string]any)
			group, _ := gvk["group"].(string)
			version, _ := gvk["version"].(string)
			kind, _ := gvk["kind"].(string)
			defs := map[string]any{}
			collectRefs(def, doc.Definitions, defs)
			s := map[string]any{"$ref": "#/definitions/" + name, "definitions": defs}
			defs[name] = def
			into[schemaPath(group, version, kind)] = strictify(s, "")
		}
	}
	return nil
}

func collectRefs(node any, all map[string]map[string]any, into map[string]any) {
	switch n := node.(type) {
	case map[string]any:
		if ref, ok := n["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/definitions/")
			if _, seen := into[name]; !seen && all[name] != nil {
				into[name] = all[name]
				collectRefs(all[name], all, into)
			}
		}
		for _, v := range n {
			collectRefs(v, all, into)
		}
	case []any:
		for _, v := range n {
			collectRefs(v, all, into)
		}
	}
}

// strictify returns a copy of a schema in which objects with properties
// admit no others, and the types Kubernetes accepts in two spellings (a
// quantity as string or number, an int-or-string) accept both. name is the
// definition being copied ("" elsewhere).
func strictify(node any, name string) any {
	switch n := node.(type) {
	case map[string]any:
		switch {
		case name == "io.k8s.apimachinery.pkg.api.resource.Quantity":
			return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}}
		case n["format"] == "int-or-string" || n["x-kubernetes-int-or-string"] == true:
			return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}
		}
		out := make(map[string]any, len(n)+1)
		for k, v := range n {
			switch k {
			case "definitions", "properties":
				m, _ := v.(map[string]any)
				c := make(map[string]any, len(m))
				for pk, pv := range m {
					if k == "definitions" {
						c[pk] = strictify(pv, pk)
					} else {
						c[pk] = strictify(pv, "")
					}
				}
				out[k] = c
			default:
				out[k] = strictify(v, "")
			}
		}
		if _, has := n["properties"]; has && n["additionalProperties"] == nil && n["x-kubernetes-preserve-unknown-fields"] != true {
			out["additionalProperties"] = false
		}
		return out
	case []any:
		out := make([]any, len(n))
		for i, v := range n {
			out[i] = strictify(v, "")
		}
		return out
	}
	return node
}

// crdSchemas adds the schema of every served version of the
// CustomResourceDefinitions in a YAML stream.
func crdSchemas(data []byte, into map[string]any) error {
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		var crd struct {
			Kind string `json:"kind"`
			Spec struct {
				Group string `json:"group"`
				Names struct {
					Kind string `json:"kind"`
				} `json:"names"`
				Versions []struct {
					Name   string `json:"name"`
					Served bool   `json:"served"`
					Schema struct {
						OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
					} `json:"schema"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(doc, &crd); err != nil {
			return err
		}
		if crd.Kind != "CustomResourceDefinition" {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			s := strictify(v.Schema.OpenAPIV3Schema, "").(map[string]any)
			// Every object has these, whether the CRD lists them or not.
			props, _ := s["properties"].(map[string]any)
			if props == nil {
				props = map[string]any{}
				s["properties"] = props
			}
			for _, k := range []string{"apiVersion", "kind"} {
				props[k] = map[string]any{"type": "string"}
			}
			props["metadata"] = map[string]any{"type": "object"}
			into[schemaPath(crd.Spec.Group, v.Name, crd.Spec.Names.Kind)] = s
		}
	}
	return nil
}
