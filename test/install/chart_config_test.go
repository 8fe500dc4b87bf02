package install

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/claimwarden/claimwarden/config"
)

// chartOwned are controller keys the chart sets itself (ports from
// metrics.port and healthPort) or that make no sense in a Pod.
var chartOwned = map[string]bool{"kubeconfig": true, "metricsAddr": true, "healthAddr": true}

// Every configuration key the controller knows is admitted by the chart's
// values.schema.json under config, except those the chart owns, which are
// refused: a key added to the controller must be added to the chart.
func TestChartSchemaAdmitsEveryConfigKey(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(chartDir(t), "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]node `json:"properties"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	cfg := schema.Properties["config"]
	for _, k := range config.Keys() {
		top := strings.Split(k.Name, ".")[0]
		if chartOwned[top] {
			if _, ok := cfg.Properties[top]; ok {
				t.Errorf("values.schema.json admits config.%s, which the chart sets itself", top)
			}
			continue
		}
		if !cfg.admits(strings.Split(k.Name, ".")) {
			t.Errorf("values.schema.json does not admit config.%s", k.Name)
		}
	}
}

type node struct {
	Properties           map[string]node `json:"properties"`
	AdditionalProperties json.RawMessage `json:"additionalProperties"` // false, or a schema

}

func (n node) admits(path []string) bool {
	if len(path) == 0 {
		return true
	}
	if child, ok := n.Properties[path[0]]; ok {
		return child.admits(path[1:])
	}
	return string(n.AdditionalProperties) != "false"
}

// The configuration file the chart renders is one the controller loads, for
// the default and the full values.
func TestChartConfigLoads(t *testing.T) {
	for name, args := range map[string][]string{"default": nil, "full": {"-f", fullValues(t)}} {
		t.Run(name, func(t *testing.T) {
			cm := find(mustTemplate(t, args...), "ConfigMap", "claimwarden-config")
			data, _, _ := unstructured.NestedString(cm.Object, "data", "config.yaml")
			f := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(f, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := config.Load(nil, f, nil)
			if err != nil {
				t.Fatalf("the controller refuses the chart's config.yaml: %v\n%s", err, data)
			}
			if c.MetricsAddr != ":8080" || c.HealthAddr != ":8081" {
				t.Errorf("metricsAddr %q healthAddr %q, want the chart's ports", c.MetricsAddr, c.HealthAddr)
			}
		})
	}
}
