package policies

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// EnginePolicy is the policy id of denials the engine itself issues when
// it cannot get an answer from the policies (compile error, runtime error,
// wrong result shape, timeout, unreadable source).
const EnginePolicy = "policy-engine"

// UnnamedPolicy is the policy id of a result given as a bare string: the
// string is the message and the rule did not say who it is.
const UnnamedPolicy = "unknown"

// Evaluate decides one claim change: one evaluation of the prepared query
// for data.claimwarden.claims.deny and .warn with in as input (in.Params
// set from configuration). It never fails open: every way of not getting a
// well-formed answer is a denial naming the cause. The verdict is logged as
// a decision record and, when configured, sent to OPA's decision-log plugin.
func (e *Engine) Evaluate(ctx context.Context, in Input) Verdict {
	c := e.cur.Load()
	in.Params = c.params
	start := time.Now()
	v := Verdict{Revision: c.revision}
	// One encoding serves the digest and OPA (rego.EvalInput would marshal
	// the struct a second time).
	input, digest, err := encodeInput(in, c.encodedParams)
	switch {
	case err != nil:
		v.deny("encoding the policy input: " + err.Error())
	case c.failure != "":
		v.deny(c.failure)
	default:
		e.eval(ctx, c, input, in.Change.Kind == KindAutoresize, &v)
	}
	v.InputDigest = digest
	v.Allowed = len(v.Denials) == 0
	e.record(ctx, c, in, input, v, time.Since(start))
	return v
}

// eval runs the prepared query under the evaluation timeout and reads the
// result into v.
func (e *Engine) eval(parent context.Context, c *compiled, input ast.Value, resize bool, v *Verdict) {
	if err := parent.Err(); err != nil {
		// OPA notices cancellation asynchronously; a short evaluation
		// would finish and answer for a caller that has given up.
		v.deny("policy evaluation cancelled: " + err.Error())
		return
	}
	// Cancel OPA's evaluation when ctx ends (timeout, caller or memory
	// budget). Handing OPA the Cancel saves the goroutine it would start
	// per evaluation to watch ctx; the callback runs only if ctx ends first.
	stop := topdown.NewCancel()
	admitted, release, err := e.guard.admit(parent, stop)
	if err != nil {
		v.deny("policy evaluation cancelled: " + err.Error())
		return
	}
	defer release()
	ctx, cancel := context.WithTimeout(admitted, e.timeout)
	defer cancel()
	ctx = withValueLimit(ctx, e.limit)
	defer context.AfterFunc(ctx, stop.Cancel)()
	// No metrics are read: OPA's no-op implementation spares allocating a
	// fresh set of timers and counters per evaluation.
	q, sets := c.query, 2
	if resize {
		q, sets = c.resizeQuery, 3
	}
	rs, err := evalQuery(ctx, q, input, stop)
	if err != nil {
		v.deny(e.describeEvalError(parent, ctx, err))
		return
	}
	if len(rs) != 1 || len(rs[0].Bindings) != sets {
		// The query's comprehensions are always defined; anything else
		// is a bug worth a denial rather than an allow.
		v.deny(fmt.Sprintf("policy result of the wrong shape: %d results for the deny/warn/resize query", len(rs)))
		return
	}
	var errs []string
	v.Denials, errs = readReasons("deny", rs[0].Bindings["deny"], errs)
	v.Warnings, errs = readReasons("warn", rs[0].Bindings["warn"], errs)
	if resize {
		v.Resizes, errs = readResizes(rs[0].Bindings["resize"], errs)
	}
	for _, msg := range errs {
		v.deny(msg)
	}
}

// evalQuery runs the prepared query. A field of the input left as a Go
// value that encoding/json refuses (an IntOrString of no known type, which
// only code can build) panics in OPA's conversion when a policy reads it:
// that is an error, and so a denial, as such an input always was.
func evalQuery(ctx context.Context, q rego.PreparedEvalQuery, input ast.Value, stop topdown.Cancel) (rs rego.ResultSet, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return q.Eval(ctx, rego.EvalParsedInput(input), rego.EvalExternalCancel(stop), rego.EvalMetrics(metrics.NoOp()))
}

// describeEvalError names why an evaluation gave no answer: the memory
// budget was exceeded (whatever error that made OPA return), the caller
// gave up (parent done), the evaluation timeout expired (ctx done, which
// OPA reports as a cancellation, or as a deadline error from http.send),
// or the policy failed at run time (OPA's message carries file:line).
func (e *Engine) describeEvalError(parent, ctx context.Context, err error) string {
	var te *topdown.Error
	cancelled := errors.As(err, &te) && te.Code == topdown.CancelErr
	if msg, ok := e.guard.exceeded(ctx); ok {
		return msg
	}
	switch {
	case parent.Err() != nil:
		return "policy evaluation cancelled: " + parent.Err().Error()
	case ctx.Err() != nil && (cancelled || errors.Is(err, context.DeadlineExceeded)):
		return fmt.Sprintf("policy evaluation timed out after %s", e.timeout)
	}
	return "policy evaluation failed: " + err.Error()
}

// deny adds an engine denial.
func (v *Verdict) deny(msg string) {
	v.Denials = append(v.Denials, Reason{Policy: EnginePolicy, Message: msg})
}
