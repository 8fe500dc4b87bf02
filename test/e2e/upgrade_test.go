package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/controllerproc"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/gitea"
)

// upgradeFrom is the release an upgrade starts from: the main branch when
// the upgrade tests were written, before the journal was sealed and the
// CRD gained counts defaults, waitingForRestart and the journal's MAC.
const upgradeFrom = "7f00641"

// crdFile is the VolumeClaimRollout CRD, relative to the repository root.
const crdFile = "config/crd/bases/claimwarden.dev_volumeclaimrollouts.yaml"

// TestUpgradeMidRollout runs the release upgradeFrom (built from that
// commit, with its CRD), stops it as an upgrade does (SIGTERM) after it
// patched the first of three claims and posted a pending status, then
// installs today's CRD and binary, as docs/upgrading.md says: the new
// controller reads the old one's records (the proposal and its revision,
// lastCommitStatus) and finishes with one patch per claim, one final status
// on the commit, the old one's pending status not posted again, the Pods
// kept.
func TestUpgradeMidRollout(t *testing.T) {
	cl := started(t)
	ctx := context.Background()
	old, newCRD := releaseInstalled(t, cl)

	g := startGitea(t)
	const repo = "upgrade"
	repoURL, err := g.CreateRepo(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	commit := func(size string) string {
		t.Helper()
		sha, err := g.PushCommit(ctx, repo, map[string]string{"web.yaml": "storage: " + size + "\n"}, "storage "+size)
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	secret := giteaSecret(t, cl, g.Token, "upgrade-token")
	// The release predates gitStatus.workloadAnnotations (and honoured the
	// annotations without it); this build needs it.
	releaseConfig, config := writeGiteaConfig(t, g.URL, secret, nil), writeGiteaConfig(t, g.URL, secret, []string{g.URL})
	ns := namespace(t, cl.admin)
	statusCtx := "claimwarden/" + ns + "/web"

	before := startBinary(t, cl, old, "release-"+upgradeFrom, "--config", releaseConfig)
	first := commit("1Gi")
	sts := fixtures.StatefulSet(ns, "web", 3, class, "1Gi")
	sts.Annotations = map[string]string{v1alpha1.RepositoryAnnotation: repoURL, v1alpha1.RevisionAnnotation: "main@sha1:" + first}
	uids := createReady(t, cl.admin, sts)
	key := client.ObjectKeyFromObject(sts)
	waitRolloutDone(t, cl.admin, key, 3, "1Gi", before)
	waitStatus(t, g, repo, first, statusCtx, "success", "3/3 claims compatible", before)
	waitPoliciesRead(t, cl, key, before)

	bumped := commit("2Gi")
	replace(t, cl.admin, sts, "2Gi", bumped)
	claims := claimNames("web", 3)
	waitPatched(t, cl.admin, ns, claims[0], "2Gi", before)
	// The old controller recorded the pending status it posted: the record
	// the new one must read rather than post it again.
	var oldPending v1alpha1.CommitStatus
	waitFor(t, "the release's pending status on "+bumped[:8]+" recorded", []*controller{before}, func(ctx context.Context) (bool, error) {
		vcr := &v1alpha1.VolumeClaimRollout{}
		if err := cl.admin.Get(ctx, key, vcr); err != nil {
			return false, err
		}
		last := vcr.Status.LastCommitStatus
		if last == nil || last.Revision != bumped || last.State != "pending" {
			return false, nil
		}
		oldPending = *last
		return true, nil
	})
	before.terminate(t, 30*time.Second)
	if req := request(claim(t, cl.admin, ns, claims[1])); req != "1Gi" {
		t.Fatalf("%s already at %s when the release stopped: the upgrade would not be mid-rollout", claims[1], req)
	}
	oldPatches := len(mustPatchEvents(t, cl.admin, ns))

	replaceCRD(t, cl.admin, newCRD)
	after := startController(t, cl, "upgraded", "--config", config)
	vcr := waitRolloutDone(t, cl.admin, key, 3, "2Gi", after)
	waitStatus(t, g, repo, bumped, statusCtx, "success", "3/3 claims compatible", after)

	assertPatchedOnce(t, cl.admin, ns, "web", claims, "2Gi")
	if n := after.acceptedPatches(t); n != 3-oldPatches {
		t.Errorf("the upgraded controller sent %d accepted patches, want %d (the release made %d)", n, 3-oldPatches, oldPatches)
	}
	if vcr.Status.Proposal == nil || !strings.HasSuffix(vcr.Status.Proposal.Source.Revision, bumped) {
		t.Errorf("proposal %+v after the upgrade, want revision %s", vcr.Status.Proposal, bumped)
	}
	assertOneFinal(t, g, repo, bumped, statusCtx, "success", oldPending)
	assertPodsKept(t, cl.admin, sts, uids)
	t.Logf("release %s made %d patch(es) and posted %s %q; the upgraded controller made the rest", upgradeFrom, oldPatches, oldPending.State, oldPending.Description)
}

// releaseInstalled builds (or finds cached) the release upgradeFrom and
// replaces the CRD with its own until the test ends; it returns the binary
// and today's CRD, which the upgrade installs.
func releaseInstalled(t *testing.T, cl *cluster) (binary string, newCRD []byte) {
	t.Helper()
	ctx := context.Background()
	// A cold build takes minutes on a loaded machine; later runs find it
	// in the cache.
	began := time.Now()
	buildCtx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	binary, err := controllerproc.BuildAt(buildCtx, upgradeFrom)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	version, err := controllerproc.Version(ctx, binary)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(version, upgradeFrom) {
		t.Fatalf("%s is %q, want the build of %s", binary, version, upgradeFrom)
	}
	t.Logf("release %s: %s (%s) in %v", upgradeFrom, binary, version, time.Since(began).Round(time.Millisecond))
	oldCRD, err := controllerproc.FileAt(ctx, upgradeFrom, crdFile)
	if err != nil {
		t.Fatal(err)
	}
	if newCRD, err = controllerproc.FileAt(ctx, "HEAD", crdFile); err != nil {
		t.Fatal(err)
	}
	replaceCRD(t, cl.admin, oldCRD)
	// Whatever happens, the tests after this one get today's CRD back.
	t.Cleanup(func() { replaceCRD(t, cl.admin, newCRD) })
	return binary, newCRD
}

// assertOneFinal reads every status of the commit: exactly one final
// state, last, none posted twice in a row, and the pending one the release
// recorded (before) posted once: the upgraded controller read the record.
func assertOneFinal(t *testing.T, g *gitea.Server, repo, sha, statusContext, final string, before v1alpha1.CommitStatus) {
	t.Helper()
	all, err := g.Statuses(context.Background(), repo, sha)
	if err != nil {
		t.Fatal(err)
	}
	mine := ofContext(all, statusContext)
	for _, p := range finalProblems(mine, sha, statusContext, final) {
		t.Error(p)
	}
	n := 0
	for _, s := range mine {
		if s.State == before.State && s.Description == before.Description {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%s: the release's %s %q posted %d times, want once: %s", sha[:8], before.State, before.Description, n, states(mine))
	}
}

// replaceCRD makes the VolumeClaimRollout CRD's spec the one in manifest,
// as `kubectl replace` does: the old release's CRD exactly (an apply would
// merge it with today's fields), then today's again.
func replaceCRD(t *testing.T, c client.Client, manifest []byte) {
	t.Helper()
	want := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(manifest, &want.Object); err != nil {
		t.Fatal(err)
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(want.GroupVersionKind())
	if err := c.Get(context.Background(), client.ObjectKey{Name: want.GetName()}, live); err != nil {
		t.Fatal(err)
	}
	live.Object["spec"] = want.Object["spec"]
	if err := c.Update(context.Background(), live); err != nil {
		t.Fatal(err)
	}
}

// waitPoliciesRead waits until the rollout of key says its controller has
// read its policies. The release upgradeFrom evaluates claims before it has
// read its policy ConfigMaps and posts the fail-closed denial as a failure
// on the commit; a bump made before then would carry that failure.
func waitPoliciesRead(t *testing.T, cl *cluster, key client.ObjectKey, ctl *controller) {
	t.Helper()
	waitFor(t, "the policies of "+ctl.Name()+" read", []*controller{ctl}, func(ctx context.Context) (bool, error) {
		vcr := &v1alpha1.VolumeClaimRollout{}
		if err := cl.admin.Get(ctx, key, vcr); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return conditions.IsTrue(vcr, v1alpha1.PoliciesReadyCondition), nil
	})
}
