package policies

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
)

// engLogCollector is a decision-log service: it receives the gzipped JSON
// arrays of events OPA's plugin uploads.
type engLogCollector struct {
	mu     sync.Mutex
	events []map[string]any
	paths  []string
}

func (c *engLogCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	zr, err := gzip.NewReader(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var events []map[string]any
	if err := json.NewDecoder(zr).Decode(&events); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.events = append(c.events, events...)
	c.paths = append(c.paths, r.Method+" "+r.URL.Path)
	c.mu.Unlock()
}

func (c *engLogCollector) received() ([]map[string]any, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]map[string]any(nil), c.events...), append([]string(nil), c.paths...)
}

func TestEngineDecisionLogPlugin(t *testing.T) {
	var col engLogCollector
	srv := httptest.NewServer(&col)
	defer srv.Close()
	e := engNew(t, Options{DecisionLogs: map[string]any{
		"labels":        map[string]any{"cluster": "test-cluster"},
		"services":      []any{map[string]any{"name": "logs", "url": srv.URL}},
		"decision_logs": map[string]any{"service": "logs", "reporting": map[string]any{"trigger": "manual"}},
	}})

	v := e.Evaluate(context.Background(), engInput(0, 20, 10))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.dlog.flush(ctx); err != nil {
		t.Fatal(err)
	}
	events, paths := col.received()
	if len(events) != 1 || len(paths) != 1 || paths[0] != "POST /logs" {
		t.Fatalf("received %d events on %v", len(events), paths)
	}
	ev := events[0]
	custom, _ := ev["custom"].(map[string]any)
	result, _ := ev["result"].(map[string]any)
	input, _ := ev["input"].(map[string]any)
	labels, _ := ev["labels"].(map[string]any)
	change, _ := input["change"].(map[string]any)
	switch {
	case ev["decision_id"] == "" || ev["decision_id"] == nil:
		t.Errorf("no decision id: %v", ev)
	case ev["path"] != DecisionPath:
		t.Errorf("path %v", ev["path"])
	case custom["input_digest"] != v.InputDigest || custom["policy_revision"] != v.Revision:
		t.Errorf("custom %v, want digest %s revision %s", custom, v.InputDigest, v.Revision)
	case result["allowed"] != false:
		t.Errorf("result %v", result)
	case change["claim"] != "data-db-0":
		t.Errorf("input change %v", change)
	case labels["cluster"] != "test-cluster":
		t.Errorf("labels %v", labels)
	}
	denials, _ := result["denials"].([]any)
	if len(denials) != 1 || denials[0].(map[string]any)["policy"] != "test-shrink" {
		t.Errorf("denials %v", denials)
	}
}

func TestEngineDecisionLogConfigErrors(t *testing.T) {
	for name, cfg := range map[string]map[string]any{
		"unknown service": {"decision_logs": map[string]any{"service": "nowhere"}},
		"nothing to do":   {"decision_logs": map[string]any{}},
	} {
		if _, err := New(context.Background(), Options{defaults: engDefaults, DecisionLogs: cfg}); err == nil ||
			!strings.HasPrefix(err.Error(), "policies.decisionLogs:") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestEngineDecisionRecordIsLogged(t *testing.T) {
	var mu sync.Mutex
	var lines []map[string]any
	log := funcr.NewJSON(func(obj string) {
		var m map[string]any
		if err := json.Unmarshal([]byte(obj), &m); err == nil {
			mu.Lock()
			lines = append(lines, m)
			mu.Unlock()
		}
	}, funcr.Options{})
	e := engNew(t, Options{Logger: log})
	v := e.Evaluate(context.Background(), engInput(3, 20, 10))

	mu.Lock()
	defer mu.Unlock()
	var rec map[string]any
	for _, l := range lines {
		if l["msg"] == "policy verdict" {
			rec = l
		}
	}
	if rec == nil {
		t.Fatalf("no decision record in %v", lines)
	}
	policies, _ := rec["policies"].([]any)
	if rec["input_digest"] != v.InputDigest || rec["revision"] != v.Revision || rec["allowed"] != false ||
		len(policies) != 1 || policies[0] != "test-shrink" || rec["claim"] != "data-db-3" {
		t.Fatalf("record %v", rec)
	}
}

func TestEngineConsoleDecisionLogsReachTheLogger(t *testing.T) {
	var mu sync.Mutex
	var msgs []string
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		msgs = append(msgs, prefix+" "+args)
		mu.Unlock()
	}, funcr.Options{})
	e := engNew(t, Options{Logger: log, DecisionLogs: map[string]any{"decision_logs": map[string]any{"console": true}}})
	v := e.Evaluate(context.Background(), engInput(0, 10, 20))
	mu.Lock()
	defer mu.Unlock()
	for _, m := range msgs {
		if strings.HasPrefix(m, "decision-log ") && strings.Contains(m, v.InputDigest) {
			return
		}
	}
	t.Fatalf("no console decision log carrying the digest in %q", msgs)
}
