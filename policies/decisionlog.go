package policies

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/plugins"
	"github.com/open-policy-agent/opa/v1/plugins/logs"
	"github.com/open-policy-agent/opa/v1/server"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
)

// DecisionPath is the path decision-log events carry, as OPA's server
// would for a query of data.claimwarden.claims.
const DecisionPath = "claimwarden/claims"

// record writes the decision record of one verdict: a structured Info line
// (the controller evaluates only when a claim, its StatefulSet or the
// policies change, so the volume is bounded by changes, not by reconciles)
// and, when configured, an event of OPA's decision-log plugin.
func (e *Engine) record(ctx context.Context, c *compiled, in Input, input ast.Value, v Verdict, took time.Duration) {
	var id string
	if e.dlog != nil {
		id = uuid.NewString()
		e.dlog.log(ctx, id, c, in, input, v)
	}
	if !e.log.Enabled() {
		return
	}
	kv := []any{
		"input_digest", v.InputDigest,
		"revision", v.Revision,
		"allowed", v.Allowed,
		"policies", policyIDs(v),
		"denials", messages(v.Denials),
		"warnings", messages(v.Warnings),
		"kind", in.Change.Kind,
		"namespace", in.Change.Namespace,
		"statefulSet", in.Change.StatefulSet,
		"claim", in.Change.Claim,
		"duration", took,
	}
	if id != "" {
		kv = append(kv, "decision_id", id)
	}
	e.log.Info("policy verdict", kv...)
}

// policyIDs lists the policies that denied or warned, without repeats.
func policyIDs(v Verdict) []string {
	var ids []string
	seen := map[string]bool{}
	for _, rs := range [][]Reason{v.Denials, v.Warnings} {
		for _, r := range rs {
			if !seen[r.Policy] {
				seen[r.Policy] = true
				ids = append(ids, r.Policy)
			}
		}
	}
	return ids
}

func messages(rs []Reason) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Policy + ": " + r.Message
	}
	return out
}

// decisionLogger is OPA's decision-log plugin on a plugin manager of its
// own: the manager only carries the services and labels the plugin needs.
type decisionLogger struct {
	manager *plugins.Manager
	plugin  *logs.Plugin
	masked  bool // a mask policy is loaded
}

// newDecisionLogger starts OPA's decision-log plugin from an OPA
// configuration document ({"services": ..., "decision_logs": ..., "labels": ...}).
// mask, when set, is the plugin's mask policy (maskModule).
func newDecisionLogger(ctx context.Context, cfg map[string]any, mask *loader.RegoFile, log logr.Logger) (*decisionLogger, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("policies.decisionLogs: %w", err)
	}
	opts := []func(*plugins.Manager){
		plugins.Logger(newOPALogger(log, "decision-logs")),
		plugins.ConsoleLogger(opaLogger{log: log.WithName("decision-log"), console: true}),
	}
	if mask != nil {
		opts = append(opts, plugins.InitFiles(loader.Result{Modules: map[string]*loader.RegoFile{mask.Name: mask}}))
	}
	m, err := plugins.New(raw, "claimwarden", inmem.New(), opts...)
	if err != nil {
		return nil, fmt.Errorf("policies.decisionLogs: %w", err)
	}
	pc, err := logs.NewConfigBuilder().
		WithBytes(m.Config.DecisionLogs).
		WithServices(m.Services()).
		WithLogger(m.Logger()).
		Parse()
	if err != nil {
		return nil, fmt.Errorf("policies.decisionLogs: %w", err)
	}
	if pc == nil {
		return nil, errors.New(`policies.decisionLogs: "decision_logs" names no service, plugin or console output`)
	}
	p := logs.New(pc, m)
	m.Register(logs.Name, p)
	if err := m.Start(ctx); err != nil {
		return nil, fmt.Errorf("policies.decisionLogs: %w", err)
	}
	return &decisionLogger{manager: m, plugin: p, masked: mask != nil}, nil
}

// log hands one verdict to the plugin, which buffers it for upload (or
// writes it to the console). The event carries the input digest and the
// policy revision in "custom" so that it can be matched with the
// controller's own decision record.
func (d *decisionLogger) log(ctx context.Context, id string, c *compiled, in Input, input ast.Value, v Verdict) {
	result := any(map[string]any{
		"allowed":  v.Allowed,
		"denials":  reasonsJSON(v.Denials),
		"warnings": reasonsJSON(v.Warnings),
	})
	info := &server.Info{
		DecisionID: id,
		Path:       DecisionPath,
		Timestamp:  time.Now(),
		Results:    &result,
		Revision:   c.revision,
		Bundles:    map[string]server.BundleInfo{},
		Custom:     map[string]any{"input_digest": v.InputDigest, "policy_revision": c.revision},
	}
	for name, rev := range c.bundles {
		info.Bundles[name] = server.BundleInfo{Revision: rev}
	}
	if input != nil {
		x, err := d.inputJSON(in, input)
		if err == nil {
			info.Input = &x
			info.InputAST = input
		}
	}
	if err := d.plugin.Log(ctx, info); err != nil {
		d.manager.Logger().Error("decision log: %v", err)
	}
}

// inputJSON is the input as the event carries it. OPA masks plain JSON
// values only, while the engine's input keeps fields as Go values until a
// policy reads them: with a mask, the input is encoded and decoded in full.
// Without one, the input is converted in full; encoding it first makes
// sure that cannot fail (OPA's conversion panics on what encoding/json
// refuses).
func (d *decisionLogger) inputJSON(in Input, input ast.Value) (any, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	if !d.masked {
		return ast.JSON(input)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	err = dec.Decode(&x)
	return x, err
}

func reasonsJSON(rs []Reason) []any {
	out := make([]any, len(rs))
	for i, r := range rs {
		out[i] = map[string]any{"policy": r.Policy, "msg": r.Message}
	}
	return out
}

// flush uploads buffered events now (for "trigger": "manual" reporting).
func (d *decisionLogger) flush(ctx context.Context) error { return d.plugin.Trigger(ctx) }

// stop stops the plugin, which uploads what is buffered while ctx lasts
// (periodic reporting).
func (d *decisionLogger) stop(ctx context.Context) { d.manager.Stop(ctx) }
