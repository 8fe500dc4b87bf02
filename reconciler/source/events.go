package source

// Event reasons the Reconciler uses on tool objects; each tool adds its own.
const (
	ReasonProposed    = "ClaimwardenProposed"
	ReasonNothingToDo = "ClaimwardenNothingToDo"
	// ReasonReadFailed reports a Tool.Desired error that is no ReadError.
	ReasonReadFailed = "ClaimwardenReadFailed"
	// ReasonNotManaged reports desired StatefulSets the tool does not
	// manage (Tool.Manages), left alone.
	ReasonNotManaged = "ClaimwardenNotManaged"
	// ReasonNoShard reports a tool object no claimwarden instance handles
	// (Options.Select).
	ReasonNoShard = "ClaimwardenNoShard"
)

// Event actions.
const (
	ActionPropose = "Propose"
	ActionSkip    = "Skip"
	ActionRead    = "Read"
)
