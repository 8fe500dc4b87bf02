package policies

import "context"

// Reason is one denial or warning: the policy that said it and its message.
type Reason struct {
	Policy  string `json:"policy"`
	Message string `json:"msg"`
}

// Resize is one policy's proposal to grow a claim to ToBytes.
type Resize struct {
	Policy  string `json:"policy"`
	ToBytes int64  `json:"to"`
	Message string `json:"msg"`
	// Now asks to grow the claim at once, before the pull request is
	// merged (the emergency path): its volume fills sooner than a person
	// can merge. Optional ("now": true); the grown claim is larger than
	// its template until the merge, which KEP-4650 counts as compatible.
	Now bool `json:"now,omitempty"`
}

// Verdict is the decision for one Input.
type Verdict struct {
	// Allowed is true when no policy denies. An evaluation that failed
	// (compile error, runtime error, wrong result shape, timeout) is a denial
	// naming the cause: the engine fails closed.
	Allowed  bool
	Denials  []Reason
	Warnings []Reason
	// Resizes are the sizes policies propose for a KindAutoresize question
	// (rule set resize); a proposal still goes through the claim questions.
	Resizes []Resize
	// InputDigest identifies the input (SHA-256 over its fields), for
	// decision records.
	InputDigest string
	// Revision identifies the policy set that decided; it changes whenever
	// the policies or their parameters change.
	Revision string
}

// Evaluator decides claim changes. The rollout controller asks it before
// every PVC patch and every StatefulSet convergence.
type Evaluator interface {
	Evaluate(ctx context.Context, in Input) Verdict
	// Revision is the current policy set's revision (see Verdict.Revision).
	Revision() string
}
