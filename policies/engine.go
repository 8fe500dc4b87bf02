package policies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
)

// Defaults of Options.
const (
	DefaultTimeout      = time.Second
	DefaultPollInterval = 10 * time.Second
)

// Options configures an Engine. The controller maps its policies.* keys onto it.
type Options struct {
	// Dirs are directories (or single files) of .rego policies and .json/.yaml
	// data read with OPA's loader, in addition to the embedded defaults.
	// Hidden entries (names starting with ".", as in a mounted ConfigMap's
	// ..data) and *_test.rego files are skipped.
	Dirs []string
	// PollInterval is how often Dirs are re-read; a change is picked up
	// without a restart. Zero means DefaultPollInterval; negative disables
	// polling (Reload still re-reads them).
	PollInterval time.Duration
	// Bundles are OPA bundles polled from HTTP bundle servers.
	Bundles []BundleSource
	// Params are visible to policies as input.params and data.claimwarden.params.
	Params map[string]any
	// Timeout bounds one evaluation; zero means DefaultTimeout.
	Timeout time.Duration
	// ValueLimitBytes bounds the result of every builtin that can build a
	// value larger than its arguments (concat, sprintf, replace,
	// array.concat, json.marshal, ...; see value_limits.go); a call that
	// would exceed it is an error, i.e. a denial. Zero means
	// DefaultValueLimit.
	ValueLimitBytes int64
	// MemoryBudgetBytes bounds how much the heap may grow while
	// evaluations run, all of them together (see memory_budget.go): when
	// it grows more, every running evaluation stops and denies. Zero means
	// DefaultMemoryBudget.
	MemoryBudgetBytes int64
	// AllowNetwork keeps http.send, net.*, opa.runtime and the JSON-schema
	// builtins (which fetch remote $refs) available to policies; by default
	// a policy calling one of them does not compile.
	AllowNetwork bool
	// DecisionLogs is an OPA configuration document holding "decision_logs"
	// and the "services" (and optionally "labels") it refers to, as OPA's own
	// configuration file spells them. When set, every verdict is also sent
	// through OPA's decision-log plugin.
	DecisionLogs map[string]any
	// DecisionLogMask lists JSON pointers into the decision-log event
	// ("/input/source/repository", "/result/denials") that the plugin
	// removes before the event leaves the process, through OPA's own
	// masking (a system.log.mask policy of the plugin's). The event
	// lists them under "erased"; its input digest still identifies the
	// whole input.
	DecisionLogMask []string
	// Logger receives the decision records (one Info line per verdict) and
	// the engine's own messages.
	Logger logr.Logger

	// defaults replaces the shipped policies in tests; nil means shipped.
	defaults fs.FS
}

// Engine loads policies from the embedded defaults, directories, ConfigMaps
// and OPA bundles, compiles them once per revision, and evaluates them for
// every claim change, failing closed. It implements Evaluator.
type Engine struct {
	opts    Options
	timeout time.Duration
	limit   int64 // Options.ValueLimitBytes or its default
	guard   *memoryGuard
	log     logr.Logger
	params  map[string]any // JSON-normalised Options.Params

	// cur is the compiled policy set Evaluate reads without locking: a
	// recompile builds a new one and swaps the pointer, so an evaluation
	// always sees one consistent revision.
	cur atomic.Pointer[compiled]

	// mu serialises source updates and recompiles and guards the fields below.
	mu         sync.Mutex
	embedded   contribution
	dirs       contribution
	configMaps map[string]contribution // key: namespace/name
	bundles    []*bundleSource

	// reloadMu serialises Reload: OPA's downloader must not run two
	// downloads of one bundle at once.
	reloadMu sync.Mutex

	changes chan struct{}
	dlog    *decisionLogger
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	stopped sync.Once
}

var _ Evaluator = (*Engine)(nil)

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.ValueLimitBytes <= 0 {
		o.ValueLimitBytes = DefaultValueLimit
	}
	if o.MemoryBudgetBytes <= 0 {
		o.MemoryBudgetBytes = DefaultMemoryBudget
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return o
}

// New builds an Engine and starts its directory poller and bundle
// downloaders. Policies that do not compile are not an error here: they
// make every verdict a denial naming file:line, and Status reports them.
// Errors are configuration errors (bad bundle source, bad decision-log
// configuration, parameters that are not JSON).
func New(ctx context.Context, o Options) (*Engine, error) {
	o = o.withDefaults()
	e := &Engine{
		opts:       o,
		timeout:    o.Timeout,
		limit:      o.ValueLimitBytes,
		guard:      newMemoryGuard(o.MemoryBudgetBytes, runtime.GOMAXPROCS(0)),
		log:        o.Logger,
		configMaps: map[string]contribution{},
		changes:    make(chan struct{}, 1),
	}
	params, err := normaliseParams(o.Params)
	if err != nil {
		return nil, err
	}
	e.params = params
	defaults := o.defaults
	if defaults == nil {
		defaults = shipped
	}
	e.embedded = embeddedContribution(defaults)
	e.dirs = dirContribution(o.Dirs)
	for _, bs := range o.Bundles {
		b, err := e.newBundleSource(bs)
		if err != nil {
			return nil, err
		}
		e.bundles = append(e.bundles, b)
	}
	mask, err := maskModule(o.DecisionLogMask)
	if err != nil {
		return nil, err
	}
	if o.DecisionLogs != nil {
		if e.dlog, err = newDecisionLogger(ctx, o.DecisionLogs, mask, e.log); err != nil {
			return nil, err
		}
	}

	e.mu.Lock()
	e.recompileLocked(ctx)
	e.mu.Unlock()

	// The pollers outlive New's context: they run until Stop.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e.cancel = cancel
	for _, b := range e.bundles {
		b.start(runCtx)
	}
	if poll := e.pollInterval(); poll > 0 && len(o.Dirs) > 0 {
		e.wg.Add(1)
		go e.pollDirs(runCtx, poll)
	}
	return e, nil
}

func (e *Engine) pollInterval() time.Duration {
	if e.opts.PollInterval == 0 {
		return DefaultPollInterval
	}
	return e.opts.PollInterval
}

// Stop stops the pollers and downloaders and flushes the decision-log
// plugin (bounded by a few seconds). Evaluate keeps working on the last
// compiled policies.
func (e *Engine) Stop() {
	e.stopped.Do(func() {
		e.cancel()
		e.wg.Wait()
		for _, b := range e.bundles {
			b.stop()
		}
		if e.dlog != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			e.dlog.stop(ctx)
		}
	})
}

// Revision identifies the current policy set: a digest of every module,
// data document, parameter and the sandbox setting. It changes when any
// source changes and only then.
func (e *Engine) Revision() string { return e.cur.Load().revision }

// Changes is signalled (without blocking, coalesced) after the revision
// changed, so the controller can re-evaluate every claim change.
func (e *Engine) Changes() <-chan struct{} { return e.changes }

// Reload re-reads the directories and downloads every bundle whose source
// has Trigger "manual" now, returning once the new policies (if any) are
// compiled. The directory poller calls the directory part on its own.
func (e *Engine) Reload(ctx context.Context) error {
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	e.reloadDirs(ctx)
	var errs []error
	for _, b := range e.bundles {
		if b.manual() {
			if err := b.dl.Trigger(ctx); err != nil {
				errs = append(errs, fmt.Errorf("bundle %s: %w", b.cfg.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// notify signals Changes without blocking: one pending signal is enough
// for the controller to re-enqueue everything.
func (e *Engine) notify() {
	select {
	case e.changes <- struct{}{}:
	default:
	}
}

// normaliseParams round-trips the parameters through JSON so that policies,
// the revision digest and the input all see the same plain JSON values
// whatever Go types configuration produced.
func normaliseParams(p map[string]any) (map[string]any, error) {
	out := map[string]any{}
	if len(p) == 0 {
		return out, nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("policies.params is not JSON: %w", err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("policies.params is not a JSON object: %w", err)
	}
	return out, nil
}
