package flux

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	notifyv1 "github.com/fluxcd/notification-controller/api/v1"
	notifyv1beta3 "github.com/fluxcd/notification-controller/api/v1beta3"
	eventv1 "github.com/fluxcd/pkg/apis/event/v1"
	"github.com/go-logr/logr"
	"github.com/google/cel-go/cel"
	celtypes "github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// The tests below keep docs/flux-notifications.md honest: its manifests must
// decode strictly into the real API types (a misspelt field fails), and its
// Alert filters and commitStatusExpr must do what the page says with the
// events this package really sends. notification-controller cannot run
// here, so where it matters its metadata handling is mirrored (ncMetadata).

const docPath = "../../docs/flux-notifications.md"

// kustomizeControllerMessages are messages of kustomize-controller's own
// events about a Kustomization; claimwarden's filters must not take them.
var kustomizeControllerMessages = []string{
	"Reconciliation finished in 1.234s, next run in 10m0s",
	"StatefulSet/db/pg configured\nService/db/pg unchanged",
	"Health check failed after 5m0s: timeout waiting for: [StatefulSet/db/pg status: 'InProgress']",
	"kustomize build failed: accumulating resources: accumulation err='accumulating resources from './apps': no such file'",
	"dependency 'flux-system/infra' is not ready",
	"Source artifact not found, retrying in 30s",
	"failed to decode Kubernetes YAML from /tmp/kustomization-1234/apps.yaml: missing Resource metadata",
	`StatefulSet.apps "pg" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas' are forbidden`,
	"StatefulSet/db/pg deleted",
}

// docManifests holds the decoded manifests of the page.
type docManifests struct {
	text      string
	providers map[string]notifyv1beta3.Provider
	alerts    map[string]notifyv1beta3.Alert
	policies  []networkingv1.NetworkPolicy
	secrets   []corev1.Secret
	config    []map[string]any
	json      []map[string]any
}

func readDoc(t *testing.T) docManifests {
	t.Helper()
	raw, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatalf("reading the doc: %v", err)
	}
	m := docManifests{
		text:      string(raw),
		providers: map[string]notifyv1beta3.Provider{},
		alerts:    map[string]notifyv1beta3.Alert{},
	}
	fence := regexp.MustCompile("(?ms)^```(yaml|json)\n(.*?)^```")
	for _, b := range fence.FindAllStringSubmatch(m.text, -1) {
		if b[1] == "json" {
			var v map[string]any
			if err := json.Unmarshal([]byte(b[2]), &v); err != nil {
				t.Fatalf("JSON example does not parse: %v\n%s", err, b[2])
			}
			m.json = append(m.json, v)
			continue
		}
		for _, d := range regexp.MustCompile(`(?m)^---\n`).Split(b[2], -1) {
			if strings.TrimSpace(d) == "" {
				continue
			}
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(d), &tm); err != nil {
				t.Fatalf("YAML example does not parse: %v\n%s", err, d)
			}
			strict := func(into any) {
				t.Helper()
				if err := yaml.UnmarshalStrict([]byte(d), into); err != nil {
					t.Fatalf("%s example does not decode strictly: %v\n%s", tm.Kind, err, d)
				}
			}
			switch tm.Kind {
			case "Provider":
				var p notifyv1beta3.Provider
				strict(&p)
				m.providers[p.Name] = p
			case "Alert":
				var a notifyv1beta3.Alert
				strict(&a)
				m.alerts[a.Name] = a
			case "NetworkPolicy":
				var np networkingv1.NetworkPolicy
				strict(&np)
				m.policies = append(m.policies, np)
			case "Secret":
				var s corev1.Secret
				strict(&s)
				m.secrets = append(m.secrets, s)
			case "":
				var c map[string]any
				strict(&c)
				m.config = append(m.config, c)
			default:
				t.Fatalf("the doc has a %s example this test does not check", tm.Kind)
			}
			if tm.Kind != "" && tm.Kind != "Secret" && tm.Kind != "NetworkPolicy" &&
				tm.APIVersion != notifyv1beta3.GroupVersion.String() {
				t.Errorf("%s example has apiVersion %q, want %q", tm.Kind, tm.APIVersion, notifyv1beta3.GroupVersion)
			}
		}
	}
	return m
}

// captureEvent sends one event through a Notifier and returns its body as
// notification-controller receives it.
func captureEvent(t *testing.T, state, reason, description string) map[string]any {
	t.Helper()
	r := newReceiver(t, http.StatusAccepted)
	n := newTestNotifier(t, r, logr.Discard())
	if !n.Notify(context.Background(), stsKey("db", "pg"), fromKustomization("apps", testRevision), state, reason, description) {
		t.Fatal("Notify returned false")
	}
	flush(t, n)
	got := r.got()
	if len(got) != 1 {
		t.Fatalf("receiver got %d events, want 1", len(got))
	}
	var ev map[string]any
	if err := json.Unmarshal(got[0].body, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// ncMetadata mirrors what notification-controller (v1.5.0 on; read in its
// internal/server: cleanupMetadata, excludeInternalMetadata,
// combineEventMetadata) does to an event's metadata before a Provider and a
// commitStatusExpr see it: keep only keys under the event group or the
// involved object's group, drop the token, strip the prefixes (object group
// wins over the Alert's eventMetadata, which wins over the event group).
func ncMetadata(t *testing.T, ev map[string]any, alert notifyv1beta3.Alert) map[string]any {
	t.Helper()
	obj := ev["involvedObject"].(map[string]any)
	gv, err := schema.ParseGroupVersion(obj["apiVersion"].(string))
	if err != nil {
		t.Fatal(err)
	}
	objectPrefix := gv.Group + "/"
	const eventPrefix = eventv1.Group + "/"
	in, _ := ev["metadata"].(map[string]any)
	out := map[string]any{}
	for k, v := range in {
		if strings.HasPrefix(k, eventPrefix) {
			out[strings.TrimPrefix(k, eventPrefix)] = v
		}
	}
	for k, v := range alert.Spec.EventMetadata {
		out[k] = v
	}
	for k, v := range in {
		switch k {
		case objectPrefix + eventv1.MetaChecksumKey, objectPrefix + eventv1.MetaDigestKey, objectPrefix + eventv1.MetaTokenKey:
			continue
		}
		if strings.HasPrefix(k, objectPrefix) {
			out[strings.TrimPrefix(k, objectPrefix)] = v
		}
	}
	return out
}

func TestDocConfigSnippet(t *testing.T) {
	m := readDoc(t)
	var addr string
	for _, c := range m.config {
		if gs, ok := c["gitStatus"].(map[string]any); ok {
			addr, _ = gs["fluxEventsAddr"].(string)
		}
	}
	if addr == "" {
		t.Fatal("the doc shows no gitStatus.fluxEventsAddr")
	}
	if _, err := NewNotifier(addr, "claimwarden", logr.Discard()); err != nil {
		t.Errorf("the documented address %q is refused: %v", addr, err)
	}
}

// TestDocAlertsSelectClaimwardenEvents checks the filters of both documented
// Alerts against a real event and kustomize-controller's messages, as
// notification-controller applies them: at least one inclusion expression
// must match the message, no exclusion expression may.
func TestDocAlertsSelectClaimwardenEvents(t *testing.T) {
	m := readDoc(t)
	ev := captureEvent(t, "failure", "ResizeFailed", "resize of data-pg-1 to 20Gi failed: storage class does not allow expansion")
	msg := ev["message"].(string)

	compile := func(exprs []string) []*regexp.Regexp {
		t.Helper()
		var out []*regexp.Regexp
		for _, e := range exprs {
			re, err := regexp.Compile(e)
			if err != nil {
				t.Fatalf("regular expression %q: %v", e, err)
			}
			out = append(out, re)
		}
		return out
	}
	matchesAny := func(res []*regexp.Regexp, s string) bool {
		return slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(s) })
	}

	cw, ok := m.alerts["claimwarden-github"]
	if !ok {
		t.Fatal("the doc has no Alert claimwarden-github")
	}
	if _, ok := m.providers[cw.Spec.ProviderRef.Name]; !ok {
		t.Errorf("Alert claimwarden-github refers to Provider %q, which the doc does not define", cw.Spec.ProviderRef.Name)
	}
	if !slices.ContainsFunc(cw.Spec.EventSources, func(s notifyv1.CrossNamespaceObjectReference) bool {
		return s.Kind == "Kustomization" && s.Name == "*"
	}) {
		t.Errorf("Alert claimwarden-github does not select every Kustomization: %+v", cw.Spec.EventSources)
	}
	if cw.Spec.EventSeverity != "info" {
		t.Errorf("Alert claimwarden-github eventSeverity = %q; info is needed to get both info and error events", cw.Spec.EventSeverity)
	}
	include := compile(cw.Spec.InclusionList)
	if !matchesAny(include, msg) {
		t.Errorf("Alert claimwarden-github's inclusionList %q does not take claimwarden's message %q", cw.Spec.InclusionList, msg)
	}
	for _, kc := range kustomizeControllerMessages {
		if matchesAny(include, kc) {
			t.Errorf("Alert claimwarden-github's inclusionList takes kustomize-controller's message %q", kc)
		}
	}

	existing, ok := m.alerts["flux-github"]
	if !ok {
		t.Fatal("the doc has no example of excluding claimwarden's events from an existing Alert")
	}
	exclude := compile(existing.Spec.ExclusionList)
	if !matchesAny(exclude, msg) {
		t.Errorf("Alert flux-github's exclusionList %q lets claimwarden's message %q through", existing.Spec.ExclusionList, msg)
	}
	for _, kc := range kustomizeControllerMessages {
		if matchesAny(exclude, kc) {
			t.Errorf("Alert flux-github's exclusionList drops kustomize-controller's message %q", kc)
		}
	}
}

// TestDocCommitStatusExpr evaluates the documented commitStatusExpr the way
// notification-controller does (same CEL options and variables) on a real
// event: one context per StatefulSet, and a fallback for events without
// claimwarden's metadata rather than an evaluation error.
func TestDocCommitStatusExpr(t *testing.T) {
	m := readDoc(t)
	p, ok := m.providers["claimwarden-github"]
	if !ok {
		t.Fatal("the doc has no Provider claimwarden-github")
	}
	if p.Spec.Type != notifyv1beta3.GitHubProvider || p.Spec.SecretRef == nil {
		t.Errorf("Provider claimwarden-github: type %q, secretRef %v; want github with a secretRef", p.Spec.Type, p.Spec.SecretRef)
	}
	if !slices.ContainsFunc(m.secrets, func(s corev1.Secret) bool {
		_, hasToken := s.StringData["token"]
		return s.Name == p.Spec.SecretRef.Name && s.Namespace == p.Namespace && hasToken
	}) {
		t.Errorf("the doc defines no Secret %s/%s with a token", p.Namespace, p.Spec.SecretRef.Name)
	}
	eval := commitStatusExpr(t, p.Spec.CommitStatusExpr)
	alert := m.alerts["claimwarden-github"]
	toMap := func(o any) map[string]any {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	evalOn := func(ev map[string]any) string {
		t.Helper()
		return eval(map[string]any{"event": ev, "alert": toMap(&alert), "provider": toMap(&p)})
	}

	for _, state := range []string{"pending", "success", "failure", "error"} {
		ev := captureEvent(t, state, "R", "d")
		ev["metadata"] = ncMetadata(t, ev, alert)
		if got, want := evalOn(ev), "claimwarden/db/pg"; got != want {
			t.Errorf("%s: commit status context = %q, want %q", state, got, want)
		}
	}

	// kustomize-controller's events carry no claimwarden metadata, or none
	// at all; should one reach this Provider, it must not fail.
	kc := captureEvent(t, "success", "ReconciliationSucceeded", "d")
	kc["metadata"] = map[string]any{"revision": testRevision}
	if got, want := evalOn(kc), "Kustomization/apps"; got != want {
		t.Errorf("fallback context = %q, want %q", got, want)
	}
	delete(kc, "metadata")
	if got, want := evalOn(kc), "Kustomization/apps"; got != want {
		t.Errorf("fallback context without metadata = %q, want %q", got, want)
	}
}

// TestDocDescribesWhatIsSent keeps the field and metadata tables and the
// JSON example in step with the events Notify sends.
func TestDocDescribesWhatIsSent(t *testing.T) {
	m := readDoc(t)
	ev := captureEvent(t, "error", "ResizeFailed", "resize of data-pg-1 to 20Gi failed: storage class does not allow expansion")
	sent := ev["metadata"].(map[string]any)
	for k := range sent {
		if !strings.Contains(m.text, "`"+k+"`") {
			t.Errorf("metadata key %s is sent but not documented", k)
		}
	}
	for k := range ev {
		if !strings.Contains(m.text, `"`+k+`"`) {
			t.Errorf("event field %s is sent but missing from the JSON example", k)
		}
	}
	if len(m.json) != 1 {
		t.Fatalf("the doc has %d JSON examples, want 1", len(m.json))
	}
	example := m.json[0]
	for _, k := range []string{"involvedObject", "severity", "message", "reason", "action", "metadata", "reportingController"} {
		if !jsonEqual(example[k], ev[k]) {
			t.Errorf("JSON example %s = %v, Notify sends %v", k, example[k], ev[k])
		}
	}

	// The documented NetworkPolicy opens the event receiver's port to the
	// notification-controller Pods, nothing else.
	if len(m.policies) != 1 {
		t.Fatalf("the doc has %d NetworkPolicies, want 1", len(m.policies))
	}
	np := m.policies[0]
	if np.Namespace != "flux-system" || np.Spec.PodSelector.MatchLabels["app"] != "notification-controller" ||
		len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].Ports) != 1 || np.Spec.Ingress[0].Ports[0].Port.IntValue() != 9090 {
		t.Errorf("NetworkPolicy does not admit port 9090 of notification-controller only: %+v", np.Spec)
	}
}

func jsonEqual(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// commitStatusExpr compiles expr the way notification-controller does: its
// newCommitStatusExpression calls fluxcd/pkg/runtime/cel.NewExpression with
// WithCompile, WithOutputType(string) and the struct variables event, alert
// and provider. The environment below is that function's, copied rather than
// imported because runtime/cel also holds kstatus readers that would pull
// kustomize and cli-utils into go.mod for this one test.
func commitStatusExpr(t *testing.T, expr string) func(vars map[string]any) string {
	t.Helper()
	opts := []cel.EnvOption{
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(),
		ext.Sets(),
		ext.Encoders(),
	}
	for _, v := range []string{"event", "alert", "provider"} {
		opts = append(opts, cel.Variable(v, cel.ObjectType("google.protobuf.Struct")))
	}
	env, err := cel.NewEnv(opts...)
	if err != nil {
		t.Fatal(err)
	}
	ast, issues := env.Compile(expr)
	if issues != nil && issues.Err() != nil {
		t.Fatalf("commitStatusExpr does not compile: %v", issues.Err())
	}
	if ast.OutputType() != cel.StringType {
		t.Fatalf("commitStatusExpr is of type %v; notification-controller requires string", ast.OutputType())
	}
	prog, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.InterruptCheckFrequency(100))
	if err != nil {
		t.Fatal(err)
	}
	return func(vars map[string]any) string {
		t.Helper()
		val, _, err := prog.ContextEval(context.Background(), vars)
		if err != nil {
			t.Fatalf("commitStatusExpr on %v: %v", vars["event"], err)
		}
		s, ok := val.(celtypes.String)
		if !ok {
			t.Fatalf("commitStatusExpr returned %v (%T), not a string", val, val)
		}
		return string(s)
	}
}
