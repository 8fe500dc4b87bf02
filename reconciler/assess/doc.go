// Package assess is the one assessment of a proposal: the rollout
// controller and `claimwarden check` both call Assess, so a pull request sees
// what its rollout will get by construction, not by keeping two copies
// alike. It compares the desired templates with the claims (diff), asks the
// policies every question the comparison raises (gate), adds the denials no
// policy can lift (immutable fields), decides over the whole proposal (the
// totals every question carries) and plans the next step (plan). It is pure
// apart from the policies and the facts its caller supplies: the controller
// reads them from its cache, check from manifests or a cluster, read-only.
package assess
