package spokes

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// One cluster reached by two URLs is one identity; two clusters are two.
func TestIdentityTellsClustersApart(t *testing.T) {
	a := testenv.StartT(t, testenv.Options{})
	b := testenv.StartT(t, testenv.Options{})
	ctx := context.Background()
	byLocalhost := rest.CopyConfig(a.Config)
	byLocalhost.Host = strings.Replace(byLocalhost.Host, "127.0.0.1", "localhost", 1)
	ids := map[string]types.UID{}
	for name, cfg := range map[string]*rest.Config{"a": a.Config, "a-again": byLocalhost, "b": b.Config} {
		id, err := Identity(ctx, cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ids[name] = id
	}
	if x, y := SameCluster(ids); x != "a" || y != "a-again" {
		t.Errorf("SameCluster = %q, %q, want a and a-again", x, y)
	}
	delete(ids, "a-again")
	if x, y := SameCluster(ids); x != "" || y != "" {
		t.Errorf("two clusters told as one: %q, %q", x, y)
	}
}
