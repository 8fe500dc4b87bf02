package check

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/claimwarden/claimwarden/policies"
)

// TestSchemaDocumented holds docs/check.md to the report's types: every
// JSON field is documented, nothing else is, and the fields always written
// (no omitempty) are exactly the required ones.
func TestSchemaDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../../../docs/check.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "## JSON schema")
	if !ok {
		t.Fatal(`docs/check.md has no "## JSON schema" section`)
	}
	_, block, ok := strings.Cut(after, "```json\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("the JSON schema section has no json code block")
	}
	var schema map[string]any
	if err := json.Unmarshal([]byte(block), &schema); err != nil {
		t.Fatalf("the documented schema is not JSON: %v", err)
	}
	at := func(path ...string) map[string]any {
		var v any = schema
		for _, p := range path {
			m, _ := v.(map[string]any)
			v = m[p]
		}
		m, _ := v.(map[string]any)
		if m == nil {
			t.Fatalf("the schema has no object at %s", strings.Join(path, "."))
		}
		return m
	}
	for _, c := range []struct {
		typ  reflect.Type
		node map[string]any
	}{
		{reflect.TypeFor[Report](), schema},
		{reflect.TypeFor[Summary](), at("properties", "summary")},
		{reflect.TypeFor[StatefulSet](), at("properties", "statefulSets", "items")},
		{reflect.TypeFor[Warning](), at("properties", "warnings", "items")},
		{reflect.TypeFor[Claim](), at("$defs", "claim")},
		{reflect.TypeFor[TemplateVerdict](), at("$defs", "templateVerdict")},
		{reflect.TypeFor[CommitStatus](), at("$defs", "commitStatus")},
		{reflect.TypeFor[Cost](), at("$defs", "cost")},
		{reflect.TypeFor[policies.Reason](), at("$defs", "reason")},
	} {
		var fields, always []string
		for f := range c.typ.Fields() {
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			fields = append(fields, name)
			if !strings.Contains(opts, "omitempty") {
				always = append(always, name)
			}
		}
		props, _ := c.node["properties"].(map[string]any)
		var documented []string
		for k := range props {
			documented = append(documented, k)
		}
		var required []string
		for _, r := range c.node["required"].([]any) {
			required = append(required, r.(string))
		}
		for _, s := range [][]string{fields, always, documented, required} {
			slices.Sort(s)
		}
		if !slices.Equal(fields, documented) {
			t.Errorf("%s: fields %v, documented %v", c.typ.Name(), fields, documented)
		}
		if !slices.Equal(always, required) {
			t.Errorf("%s: always written %v, required %v", c.typ.Name(), always, required)
		}
	}
}
