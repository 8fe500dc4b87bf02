package v1alpha1

// ControllerName names claimwarden wherever the API asks who acted: the
// field manager of every write, the reporting controller of every event,
// the prefix of commit status contexts by default.
const ControllerName = "claimwarden"
