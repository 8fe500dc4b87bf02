package rollout_test

import (
	"context"
	"encoding/json"
	"testing"

	"k8s.io/client-go/discovery"

	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// appsOpenAPI is the apps/v1 OpenAPI v3 document the test's API server
// serves.
func appsOpenAPI(t *testing.T) []byte {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := paths["apis/apps/v1"].Schema("application/json")
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// Issue 29, item 4: whether Kubernetes updates claims itself is read from
// the server's own OpenAPI document. Today's server (no release has
// KEP-4650) has no volumeClaimUpdateStrategy; the same document with the
// field, as a server with the gate will serve it, says yes.
func TestClaimUpdateStrategyIsReadFromTheServersOpenAPI(t *testing.T) {
	doc := appsOpenAPI(t)
	if has, err := rollout.HasClaimUpdateStrategy(doc); err != nil || has {
		t.Fatalf("today's server: %v, %v; want no volumeClaimUpdateStrategy", has, err)
	}
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	spec := d["components"].(map[string]any)["schemas"].(map[string]any)["io.k8s.api.apps.v1.StatefulSetSpec"].(map[string]any)
	spec["properties"].(map[string]any)["volumeClaimUpdateStrategy"] = map[string]any{"type": "object"}
	gated, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if has, err := rollout.HasClaimUpdateStrategy(gated); err != nil || !has {
		t.Errorf("a server with the gate: %v, %v; want volumeClaimUpdateStrategy", has, err)
	}
	if _, err := rollout.HasClaimUpdateStrategy([]byte(`{"components":{"schemas":{}}}`)); err == nil {
		t.Error("a document without StatefulSetSpec: no error; want one, so that the controller asks again")
	}
}

// Where the server has no KEP-4650, claimwarden does the rollout, and does
// not read the StatefulSet a second time to find out.
func TestWithoutTheGateClaimwardenRollsOut(t *testing.T) {
	c := started(t)
	sts := fixtures.StatefulSet(namespace(t, c), "k", 1, classExpandable, "1Gi")
	byKubernetes, known, served, err := rollout.ByKubernetes(context.Background(), env.Config, sts)
	if err != nil || byKubernetes {
		t.Errorf("byKubernetes = %v, %v; want false on a server without the gate", byKubernetes, err)
	}
	if !known || served {
		t.Errorf("known %v, served %v; want known and not served", known, served)
	}
}
