// Package autoresize grows volumes before they fill, through Git: it reads
// how full each claim of an opted-in StatefulSet is (integrations/usage),
// asks the policies whether and how far to grow it (the autoresize
// question, rule set resize), asks the grown templates as any proposal is
// asked (reconciler/assess: max-step, quota-fits and the organisation's
// rules decide over the whole), finds the line in Git that sets the size
// (integrations/gitedit, from the repository, branch and path the GitOps
// tool reads) and proposes the change as one pull request per StatefulSet
// (integrations/pullrequest). Review and merge go the normal GitOps way:
// the tool applies the merge and claimwarden converges it.
package autoresize
