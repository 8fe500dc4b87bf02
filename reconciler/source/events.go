package source

// Event reasons the Reconciler uses on tool objects; each tool adds its own.
const (
	ReasonProposed    = "ClaimwardenProposed"
	ReasonNothingToDo = "ClaimwardenNothingToDo"
	// ReasonReadFailed reports a Tool.Desired error that is no ReadError.
	ReasonReadFailed = "ClaimwardenReadFailed"
)

// Event actions.
const (
	ActionPropose = "Propose"
	ActionSkip    = "Skip"
	ActionRead    = "Read"
)
