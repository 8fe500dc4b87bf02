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

// A proposal of the wrong shape is a denial, never a size; one whose size
// is not whole bytes within int64 names its policy and the field.
func TestEngineDeniesAMalformedResize(t *testing.T) {
	question := Input{Change: Change{Kind: KindAutoresize, Namespace: "shop", StatefulSet: "db", Claim: "data-db-0"}, Autoresize: &Autoresize{}}
	for rule, want := range map[string]string{
		`resize contains {"policy": "x", "to": "10Gi", "msg": "m"} if true`:              `resize of policy "x" has "to": "10Gi", not whole bytes`,
		`resize contains {"policy": "x", "to": -1, "msg": "m"} if true`:                  `resize of policy "x" has "to": -1, not whole bytes`,
		`resize contains {"policy": "x", "to": 0, "msg": "m"} if true`:                   `resize of policy "x" has "to": 0, not whole bytes`,
		`resize contains {"policy": "x", "to": 1.5, "msg": "m"} if true`:                 `resize of policy "x" has "to": 1.5, not whole bytes`,
		`resize contains {"policy": "x", "to": 1.5e+0, "msg": "m"} if true`:              `resize of policy "x" has "to": 1.5e+0, not whole bytes`,
		`resize contains {"policy": "x", "to": 9223372036854775808, "msg": "m"} if true`: `resize of policy "x" has "to": 9223372036854775808, not whole bytes > 0 within int64`,
		`resize contains {"policy": "x", "to": 1e+30, "msg": "m"} if true`:               `resize of policy "x" has "to": 1e+30, not whole bytes`,
		`resize contains {"policy": "x", "to": 1e+400, "msg": "m"} if true`:              `resize of policy "x" has "to": 1e+400, not whole bytes`,
		`resize contains {"policy": "x", "to": 10, "msg": "m", "now": "yes"} if true`:    `resize of policy "x" has "now": "yes", not a boolean`,
		`resize contains {"to": 10, "msg": "m"} if true`:                                 `resize contains {"msg": "m", "to": 10}`,
		`resize contains "grow" if true`:                                                 `resize contains "grow"`,
		`resize := 7`:                                                                    `resize is a number (7)`,
	} {
		e := engNew(t, Options{defaults: fstest.MapFS{"r.rego": {Data: []byte("package claimwarden.claims\n\n" + rule + "\n")}}})
		v := e.Evaluate(context.Background(), question)
		if v.Allowed || len(v.Resizes) != 0 || len(v.Denials) == 0 || !strings.Contains(v.Denials[0].Message, "data.claimwarden.claims."+want) {
			t.Errorf("%s: verdict %+v, want a denial saying %s", rule, v, want)
		}
	}
}

// A size that is an exact integer is taken in any notation Rego keeps.
func TestEngineReadsAWholeResizeInAnyNotation(t *testing.T) {
	question := Input{Change: Change{Kind: KindAutoresize, Namespace: "shop", StatefulSet: "db", Claim: "data-db-0"}, Autoresize: &Autoresize{}}
	for _, to := range []string{"3221225472", "3.221225472e+09", "3221225472.0", "32212254720e-1"} {
		e := engNew(t, Options{defaults: fstest.MapFS{"r.rego": {Data: []byte(`package claimwarden.claims

resize contains {"policy": "x", "to": ` + to + `, "msg": "m"} if true
`)}}})
		v := e.Evaluate(context.Background(), question)
		if !v.Allowed || len(v.Resizes) != 1 || v.Resizes[0].ToBytes != 3*gi {
			t.Errorf("to %s: verdict %+v, want a proposal of 3Gi", to, v)
		}
	}
}

// The shipped policy's cap, set in configuration as params are (YAML, so a
// float64 after JSON), gives a whole size the engine takes: a capped
// growth is proposed, never denied as the wrong shape.
func TestEngineReadsACappedResize(t *testing.T) {
	e := engNew(t, Options{defaults: shipped, Params: map[string]any{"autoresize_max_bytes": float64(3 * gi), "autoresize_emergency_seconds": 3600}})
	in := Input{
		Change:     Change{Kind: KindAutoresize, Namespace: "shop", StatefulSet: "db", Claim: "data-db-0", Template: "data"},
		Autoresize: &Autoresize{CapacityBytes: 2 * gi, UsedBytes: 2 * gi, Inodes: 1000, InodesUsed: 1, RequestBytes: 2 * gi, SecondsToFull: new(60.0)},
	}
	v := e.Evaluate(context.Background(), in)
	if !v.Allowed || len(v.Resizes) != 1 || v.Resizes[0].ToBytes != 3*gi || !v.Resizes[0].Now {
		t.Fatalf("verdict %+v, want one emergency proposal of 3Gi, the cap", v)
	}
}
