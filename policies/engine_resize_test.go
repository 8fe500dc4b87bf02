package policies

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
)

// An autoresize question gets the shipped policy's proposal in the
// verdict; a claim question gets none.
func TestEngineReadsResizeProposals(t *testing.T) {
	e := engNew(t, Options{defaults: shipped})
	in := Input{
		Change:     Change{Kind: KindAutoresize, Namespace: "shop", StatefulSet: "db", Claim: "data-db-0", Template: "data"},
		Autoresize: &Autoresize{CapacityBytes: 10 * gi, UsedBytes: 9 * gi, Inodes: 1000, InodesUsed: 1, RequestBytes: 10 * gi},
	}
	v := e.Evaluate(context.Background(), in)
	if !v.Allowed || len(v.Resizes) != 1 || v.Resizes[0].Policy != "autoresize" || v.Resizes[0].ToBytes != 13*gi ||
		!strings.Contains(v.Resizes[0].Message, "90% used (9Gi of 10Gi)") {
		t.Fatalf("verdict %+v, want one autoresize proposal of 13Gi", v)
	}
	if v := e.Evaluate(context.Background(), engInput(0, 10, 11)); len(v.Resizes) != 0 {
		t.Errorf("a claim change got proposals %+v", v.Resizes)
	}
}

// A proposal of the wrong shape is a denial, never a size.
func TestEngineDeniesAMalformedResize(t *testing.T) {
	question := Input{Change: Change{Kind: KindAutoresize, Namespace: "shop", StatefulSet: "db", Claim: "data-db-0"}, Autoresize: &Autoresize{}}
	for _, rule := range []string{
		`resize contains {"policy": "x", "to": "10Gi", "msg": "m"} if true`,
		`resize contains {"policy": "x", "to": -1, "msg": "m"} if true`,
		`resize contains {"policy": "x", "to": 1.5, "msg": "m"} if true`,
		`resize contains {"to": 10, "msg": "m"} if true`,
		`resize contains "grow" if true`,
		`resize := 7`,
	} {
		e := engNew(t, Options{defaults: fstest.MapFS{"r.rego": {Data: []byte("package claimwarden.claims\n\n" + rule + "\n")}}})
		v := e.Evaluate(context.Background(), question)
		if v.Allowed || len(v.Resizes) != 0 || !strings.Contains(v.Denials[0].Message, "data.claimwarden.claims.resize") {
			t.Errorf("%s: verdict %+v, want a denial naming resize", rule, v)
		}
	}
}
