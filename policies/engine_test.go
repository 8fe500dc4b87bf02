package policies

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestEngineAllowsAndDenies(t *testing.T) {
	e := engNew(t, Options{})
	if v := e.Evaluate(context.Background(), engInput(0, 10, 20)); !v.Allowed || len(v.Denials) != 0 {
		t.Fatalf("growing: want allowed, got %+v", v)
	}
	v := e.Evaluate(context.Background(), engInput(0, 20, 10))
	if v.Allowed || len(v.Denials) != 1 || v.Denials[0] != (Reason{Policy: "test-shrink", Message: "shrinks"}) {
		t.Fatalf("shrinking: want the test-shrink denial, got %+v", v)
	}
	if v.Revision == "" || v.Revision != e.Revision() {
		t.Fatalf("verdict revision %q, engine revision %q", v.Revision, e.Revision())
	}
	st := e.Status()
	if !st.Ready || st.Stale || st.CompileError != "" || len(st.Modules) != 1 || st.Modules[0] != "policies/shrink.rego" {
		t.Fatalf("status: %+v", st)
	}
}

// The digest names the input as policies see it, params included: the
// same input has the same digest in any engine, and a change to any field
// (the StatefulSet's apiVersion, which protobuf leaves out, among them)
// changes it.
func TestEngineInputDigestIdentifiesTheInput(t *testing.T) {
	params := map[string]any{"max_step_percent": 50}
	e := engNew(t, Options{Params: params})
	ctx := context.Background()
	v := e.Evaluate(ctx, engInput(1, 10, 20))
	if _, err := hex.DecodeString(v.InputDigest); err != nil || len(v.InputDigest) != 2*sha256.Size {
		t.Fatalf("digest %q is not a SHA-256 in hex", v.InputDigest)
	}
	if again := engNew(t, Options{Params: params}).Evaluate(ctx, engInput(1, 10, 20)); again.InputDigest != v.InputDigest {
		t.Fatalf("the same input in another engine: digest %s, want %s", again.InputDigest, v.InputDigest)
	}
	changes := map[string]func(*Input){
		"claim":                  func(in *Input) { in.Change.Claim = "data-db-2" },
		"PVC":                    func(in *Input) { in.PVC.Spec.VolumeName = "pvc-other" },
		"StorageClass":           func(in *Input) { in.StorageClass.Parameters = map[string]string{"type": "io2"} },
		"template":               func(in *Input) { in.Template.Labels = map[string]string{"app": "other"} },
		"StatefulSet image":      func(in *Input) { in.StatefulSet.Spec.Template.Spec.Containers[0].Image = "postgres:18" },
		"StatefulSet apiVersion": func(in *Input) { in.StatefulSet.APIVersion = "apps/v2" },
		"no StatefulSet":         func(in *Input) { in.StatefulSet = nil },
		"Namespace":              func(in *Input) { in.Namespace.Labels = map[string]string{"tier": "dev"} },
		"quotas":                 func(in *Input) { in.ResourceQuotas = engQuotas(0) },
		"source":                 func(in *Input) { in.Source.Revision = "main@sha1:fedcba9876543210" },
	}
	for what, change := range changes {
		in := engInput(1, 10, 20)
		change(&in)
		if d := e.Evaluate(ctx, in).InputDigest; d == v.InputDigest {
			t.Errorf("%s changed, the digest did not", what)
		}
	}
	other := engNew(t, Options{Params: map[string]any{"max_step_percent": 60}})
	if d := other.Evaluate(ctx, engInput(1, 10, 20)).InputDigest; d == v.InputDigest {
		t.Error("the parameters changed, the digest did not")
	}
}

// A field left as a Go value that encoding/json refuses (an IntOrString of
// no known type, which only code can build) is a denial naming the cause
// when a policy reads it, not a crash in OPA's conversion.
func TestEngineDeniesAnInputFieldItCannotEncode(t *testing.T) {
	defaults := fstest.MapFS{"sts.rego": {Data: []byte(`package claimwarden.claims

deny contains "no replicas" if input.statefulSet.spec.replicas == 0
`)}}
	e := engNew(t, Options{defaults: defaults})
	in := engInput(0, 10, 20)
	in.StatefulSet.Spec.Template.Spec.Containers[0].ReadinessProbe.TCPSocket.Port = intstr.IntOrString{Type: 7}
	v := e.Evaluate(context.Background(), in)
	if v.Allowed || len(v.Denials) != 1 || v.Denials[0].Policy != EnginePolicy || !strings.Contains(v.Denials[0].Message, "impossible IntOrString.Type") {
		t.Fatalf("want a policy-engine denial naming the field's error, got %+v", v)
	}
}

func TestEngineParamsInInputAndData(t *testing.T) {
	defaults := fstest.MapFS{"p.rego": {Data: []byte(`package claimwarden.claims

deny contains sprintf("data %v input %v", [data.claimwarden.params.limit, input.params.limit]) if true
`)}}
	e := engNew(t, Options{defaults: defaults, Params: map[string]any{"limit": 7}})
	v := e.Evaluate(context.Background(), engInput(0, 1, 2))
	if engDenied(v) != "unknown: data 7 input 7" {
		t.Fatalf("got %q", engDenied(v))
	}
}

func TestEngineStringResultsAndWarnings(t *testing.T) {
	defaults := fstest.MapFS{"w.rego": {Data: []byte(`package claimwarden.claims

warn contains "plain warning" if true

warn contains {"policy": "big", "msg": "big step"} if input.change.storage.toBytes > 100
`)}}
	e := engNew(t, Options{defaults: defaults})
	v := e.Evaluate(context.Background(), engInput(0, 1, 2))
	if !v.Allowed {
		t.Fatalf("warnings must not deny: %+v", v)
	}
	// Sets come out in OPA's order (strings before objects): deterministic.
	want := []Reason{{Policy: UnnamedPolicy, Message: "plain warning"}, {Policy: "big", Message: "big step"}}
	if !slices.Equal(v.Warnings, want) {
		t.Fatalf("warnings %+v, want %+v", v.Warnings, want)
	}
}

func TestEngineWrongShapeDenies(t *testing.T) {
	for name, rule := range map[string]string{
		"number":           `deny := 42`,
		"set of numbers":   `deny contains 1 if true`,
		"object sans msg":  `deny contains {"policy": "x"} if true`,
		"msg not a string": `deny contains {"policy": "x", "msg": 3} if true`,
		"warn number":      `warn := 1.5`,
	} {
		t.Run(name, func(t *testing.T) {
			defaults := fstest.MapFS{"bad.rego": {Data: []byte("package claimwarden.claims\n\n" + rule + "\n")}}
			e := engNew(t, Options{defaults: defaults})
			v := e.Evaluate(context.Background(), engInput(0, 1, 2))
			if v.Allowed || len(v.Denials) != 1 || v.Denials[0].Policy != EnginePolicy ||
				!strings.HasPrefix(v.Denials[0].Message, "policy result of the wrong shape: data.claimwarden.claims.") {
				t.Fatalf("want a wrong-shape denial, got %+v", v)
			}
			if !e.Status().Ready {
				t.Fatal("a wrong shape is a verdict-time problem, not a compile error")
			}
		})
	}
}

func TestEngineWrongShapeNamesTheValue(t *testing.T) {
	defaults := fstest.MapFS{"bad.rego": {Data: []byte("package claimwarden.claims\n\ndeny := 42\n")}}
	e := engNew(t, Options{defaults: defaults})
	got := engDenied(e.Evaluate(context.Background(), engInput(0, 1, 2)))
	if !strings.Contains(got, "data.claimwarden.claims.deny is a number (42)") {
		t.Fatalf("got %q", got)
	}
}

func TestEngineRuntimeErrorDenies(t *testing.T) {
	// to_number("ten") is a builtin error: with strict builtin errors it
	// fails the evaluation instead of quietly making the deny undefined.
	defaults := fstest.MapFS{"rt.rego": {Data: []byte(`package claimwarden.claims

deny contains "too big" if to_number("ten") > 5
`)}}
	e := engNew(t, Options{defaults: defaults})
	got := engDenied(e.Evaluate(context.Background(), engInput(0, 1, 2)))
	if !strings.HasPrefix(got, EnginePolicy+": policy evaluation failed: policies/rt.rego:3:") {
		t.Fatalf("want a runtime failure naming file:line, got %q", got)
	}
}

func TestEngineMalformedRegoDeniesEverything(t *testing.T) {
	e := engNew(t, Options{})
	engDrain(e)
	before := e.Revision()
	e.SetConfigMapPolicies("claimwarden-system", "org-rules", map[string]string{
		"prod.rego": "package claimwarden.claims\n\ndeny contains msg if {\n\tmsg := \"x\"\n\tinput.change.\n}\n",
	})
	if e.Revision() == before || !engSignalled(e) {
		t.Fatal("a new ConfigMap must change the revision and signal Changes")
	}
	v := e.Evaluate(context.Background(), engInput(0, 10, 20))
	got := engDenied(v)
	if v.Allowed || !strings.Contains(got, "policies do not compile: configmap/claimwarden-system/org-rules/prod.rego:6: rego_parse_error: unexpected whitespace token") {
		t.Fatalf("want a denial naming the file and line, got %q", got)
	}
	st := e.Status()
	if st.Ready || !strings.HasPrefix(st.CompileError, "configmap/claimwarden-system/org-rules/prod.rego:6:") {
		t.Fatalf("status: %+v", st)
	}

	// Fixing the ConfigMap heals the engine without a restart.
	e.SetConfigMapPolicies("claimwarden-system", "org-rules", map[string]string{
		"prod.rego": "package claimwarden.claims\n\nwarn contains \"prod\" if true\n",
	})
	if v := e.Evaluate(context.Background(), engInput(0, 10, 20)); !v.Allowed || len(v.Warnings) != 1 {
		t.Fatalf("after the fix: %+v", v)
	}
	if st := e.Status(); !st.Ready || st.CompileError != "" {
		t.Fatalf("status after the fix: %+v", st)
	}
}

func TestEngineTypeErrorNamesFileAndLine(t *testing.T) {
	defaults := fstest.MapFS{"t.rego": {Data: []byte(`package claimwarden.claims

deny contains "x" if {
	count(42) > 1
}
`)}}
	e := engNew(t, Options{defaults: defaults})
	if got := e.Status().CompileError; !strings.HasPrefix(got, "policies/t.rego:4: rego_type_error:") {
		t.Fatalf("compile error %q", got)
	}
}

func TestEngineTimeoutDenies(t *testing.T) {
	// 10^10 iterations over small arrays: runs for minutes unless the
	// evaluation is cancelled, and allocates little while it runs.
	defaults := fstest.MapFS{"loop.rego": {Data: []byte(`package claimwarden.claims

deny contains "never" if {
	some i in numbers.range(1, 100000)
	some j in numbers.range(1, 100000)
	i * j < 0
}
`)}}
	const timeout = 300 * time.Millisecond
	e := engNew(t, Options{defaults: defaults, Timeout: timeout})
	start := time.Now()
	v := e.Evaluate(context.Background(), engInput(0, 1, 2))
	took := time.Since(start)
	if got := engDenied(v); got != EnginePolicy+": policy evaluation timed out after 300ms" {
		t.Fatalf("got %q", got)
	}
	// OPA checks for cancellation between evaluation steps. Uncancelled,
	// the loop runs for minutes, so 5× proves it was stopped and leaves room
	// for a loaded machine (1.5× failed at load 10 on 2 cores).
	if took < timeout || took > timeout*5 {
		t.Fatalf("evaluation took %s for a %s timeout", took, timeout)
	}
	t.Logf("stopped after %s", took)
}

func TestEngineCallerCancellationDenies(t *testing.T) {
	e := engNew(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v := e.Evaluate(ctx, engInput(0, 1, 2))
	if got := engDenied(v); v.Allowed || got != EnginePolicy+": policy evaluation cancelled: context canceled" {
		t.Fatalf("got %q", got)
	}
}

func TestEngineDefaultTimeoutIsOneSecond(t *testing.T) {
	e := engNew(t, Options{})
	if e.timeout != time.Second {
		t.Fatalf("default timeout %s", e.timeout)
	}
}

func TestEngineBadParamsAreAConfigError(t *testing.T) {
	_, err := New(context.Background(), Options{defaults: engDefaults, Params: map[string]any{"f": func() {}}})
	if err == nil || !strings.Contains(err.Error(), "policies.params") {
		t.Fatalf("err = %v", err)
	}
}

func TestEngineShippedPolicies(t *testing.T) {
	e := engNew(t, Options{defaults: shipped})
	st := e.Status()
	if !st.Ready || !slices.Contains(st.Modules, "policies/max_step.rego") || slices.ContainsFunc(st.Modules, isRegoTest) {
		t.Fatalf("shipped set: %+v", st)
	}
	ctx := context.Background()
	if v := e.Evaluate(ctx, engInput(0, 100, 150)); !v.Allowed {
		t.Fatalf("+50%%: %s", engDenied(v))
	}
	v := e.Evaluate(ctx, engInput(0, 100, 250))
	if v.Allowed || len(v.Denials) != 1 || v.Denials[0].Policy != "max-step" {
		t.Fatalf("+150%%: want a max-step denial, got %q", engDenied(v))
	}
	if v := e.Evaluate(ctx, engInput(0, 100, 50)); v.Allowed || v.Denials[0].Policy != "increase-only" {
		t.Fatalf("shrink: want an increase-only denial, got %q", engDenied(v))
	}
	// Parameters from configuration reach the shipped policies.
	lax := engNew(t, Options{defaults: shipped, Params: map[string]any{"max_step_percent": 200}})
	if v := lax.Evaluate(ctx, engInput(0, 100, 250)); !v.Allowed {
		t.Fatalf("+150%% under max_step_percent 200: %s", engDenied(v))
	}
}

// The value OPA evaluates is what OPA reads from the input's JSON, on
// either path and with the parameters encoded once or per input.
func TestEngineInputIsOPAsReadingOfItsJSON(t *testing.T) {
	if inputFields == nil {
		t.Fatal("Input gained a field the fast encoder does not handle: evaluations take the slower path")
	}
	in := engInput(4, 10, 20)
	in.Params = map[string]any{"a": []any{1, "b"}}
	lazy, digest, err := encodeInput(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	whole, _, err := encodeInputWhole(in)
	if err != nil {
		t.Fatal(err)
	}
	std, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ast.ValueFromReader(bytes.NewReader(std))
	if err != nil {
		t.Fatal(err)
	}
	if lazy.Compare(want) != 0 || whole.Compare(want) != 0 {
		t.Fatalf("the evaluated input differs from OPA's reading of\n%s", std)
	}
	p := encodeParams(in.Params)
	if p == nil {
		t.Fatal("encodeParams: nil")
	}
	cached, cachedDigest, err := encodeInput(in, p)
	if err != nil || cachedDigest != digest || cached.Compare(want) != 0 {
		t.Fatalf("with encoded params: digest %s, want %s (%v)", cachedDigest, digest, err)
	}

	// A StatefulSet-level change has no PVC and no template; nothing may be unknown.
	in.PVC, in.StorageClass, in.Template, in.StatefulSet, in.Namespace, in.ResourceQuotas = nil, nil, nil, nil, nil, nil
	lazy, _, err = encodeInput(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if std, err = json.Marshal(in); err != nil {
		t.Fatal(err)
	}
	if want, err = ast.ValueFromReader(bytes.NewReader(std)); err != nil || lazy.Compare(want) != 0 {
		t.Fatalf("the evaluated input differs from OPA's reading of\n%s (%v)", std, err)
	}
}
