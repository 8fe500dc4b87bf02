package policies

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
)

func TestEngineDecisionLogMask(t *testing.T) {
	var col engLogCollector
	srv := httptest.NewServer(&col)
	defer srv.Close()
	var mu sync.Mutex
	var lines []string
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		lines = append(lines, prefix+" "+args)
		mu.Unlock()
	}, funcr.Options{})
	mask := []string{"/input/source/repository", "/input/statefulSet/spec/template/spec/containers"}
	e := engNew(t, Options{Logger: log, DecisionLogMask: mask, DecisionLogs: map[string]any{
		"services":      []any{map[string]any{"name": "logs", "url": srv.URL}},
		"decision_logs": map[string]any{"service": "logs", "console": true, "reporting": map[string]any{"trigger": "manual"}},
	}})
	in := engInput(0, 10, 20)
	in.Source.Repository = "https://git.example.com/secret-org/apps.git"
	v := e.Evaluate(context.Background(), in)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.dlog.flush(ctx); err != nil {
		t.Fatal(err)
	}
	events, _ := col.received()
	if len(events) != 1 {
		t.Fatalf("received %d events", len(events))
	}
	raw, err := json.Marshal(events[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"secret-org", "postgres:17.2"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the uploaded decision carries the masked %q: %s", secret, raw)
		}
	}
	input, _ := events[0]["input"].(map[string]any)
	source, _ := input["source"].(map[string]any)
	if source["revision"] != in.Source.Revision || input["change"] == nil {
		t.Errorf("more than the masked fields is gone: %s", raw)
	}
	var masked []string
	list, _ := events[0]["erased"].([]any)
	for _, m := range list {
		s, _ := m.(string)
		masked = append(masked, s)
	}
	slices.Sort(masked)
	if !slices.Equal(masked, mask) {
		t.Errorf("erased %v, want %v", masked, mask)
	}

	// The console output of the plugin is masked too; the digest still
	// identifies the full input.
	mu.Lock()
	defer mu.Unlock()
	found := false
	for _, l := range lines {
		if strings.Contains(l, "secret-org") {
			t.Errorf("a log line carries the masked repository: %s", l)
		}
		found = found || (strings.HasPrefix(l, "decision-log ") && strings.Contains(l, v.InputDigest))
	}
	if !found {
		t.Errorf("no console decision log in %q", lines)
	}
}

func TestEngineDecisionLogMaskIsValidated(t *testing.T) {
	for _, p := range []string{"input/source", "/custom/x", ""} {
		_, err := New(context.Background(), Options{defaults: engDefaults, DecisionLogMask: []string{p},
			DecisionLogs: map[string]any{"decision_logs": map[string]any{"console": true}}})
		if err == nil || !strings.Contains(err.Error(), "policies.decisionLogMask") {
			t.Errorf("%q: err = %v", p, err)
		}
	}
}
