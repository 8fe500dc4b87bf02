package rollout_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// A GitOps source whose repository URL carries a token proposes a
// StatefulSet: neither the rollout's status.proposal.source nor the policy
// input (echoed here by a policy's denial) nor any message holds the token.
func TestProposedRepositoryCarriesNoCredentials(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	labelNamespace(t, c, ns, "claimwarden.test/echo-repository", "true")
	sts := fixtures.StatefulSet(ns, "db", 1, classExpandable, "1Gi")
	live, key := createLive(t, c, sts)
	writePolicy(t, "echo_repository.rego", `package claimwarden.claims

deny contains {"policy": "echo-repository", "msg": sprintf("repository <%s>", [input.source.repository])} if {
	input.namespace.metadata.labels["claimwarden.test/echo-repository"] == "true"
}
`)
	var reapplied atomic.Int32
	p, _ := gitProposal(live, "1536Mi", &reapplied)
	p.Source.Repository = "https://x-access-token:SECRET@git.example.com/org/apps.git"
	proposals.Set(context.Background(), p)

	vcr := waitRollout(t, c, key, "denied by the echo policy", func(v *v1alpha1.VolumeClaimRollout) bool {
		return stalled(v) && strings.Contains(describe(v), "echo-repository")
	})
	const want = "https://git.example.com/org/apps.git"
	if got := vcr.Status.Proposal.Source.Repository; got != want {
		t.Errorf("status.proposal.source.repository = %q, want %q", got, want)
	}
	if d := describe(vcr); !strings.Contains(d, "repository <"+want+">") || strings.Contains(d, "SECRET") {
		t.Errorf("the policy input's source.repository is not %s without the token:\n%s", want, d)
	}
}
