package main

// scenario is one behaviour whose outcome depends on the Kubernetes version,
// and the tests on the real control plane that show it.
type scenario struct {
	// Name is the column of the support table.
	Name string
	// Tests are the tests that must all pass, by package.
	Tests []test
}

type test struct{ Package, Name string }

const (
	rollout  = "./reconciler/rollout"
	converge = "./reconciler/converge"
	e2e      = "./test/e2e"
)

// scenarios are the columns of the matrix, in the order docs/kubernetes-versions.md shows them.
var scenarios = []scenario{
	{"grow, Pods kept", []test{
		{rollout, "TestBumpPatchesHighestOrdinalFirstOneAtATime"},
		{converge, "TestConvergeReplacesTemplatesKeepingPods"},
		{converge, "TestRealServerRefusalIsRecognised"},
	}},
	{"shrink refused", []test{
		{rollout, "TestDecreaseLeavesLargerClaimsOverSized"},
		{rollout, "TestPlainDecreaseIsNeverLowered"},
	}},
	{"other class reported", []test{{rollout, "TestStorageClassChangeIsReportedNotPatched"}}},
	{"VolumeAttributesClass", []test{
		{rollout, "TestVolumeAttributesClassChangeIsCompatibleOnlyOnceApplied"},
		{rollout, "TestInfeasibleVolumeAttributesClassChangeFails"},
	}},
	{"server support read from the server", []test{{rollout, "TestServerSupportIsReadFromTheServer"}}},
	{"partition", []test{{rollout, "TestPartitionHoldsClaimsUntilItMoves"}}},
	{"OnDelete", []test{{rollout, "TestOnDeleteClaimsFollowTheirPods"}}},
	{"ordinals", []test{{rollout, "TestStartOrdinalClaimsGrowHighestFirst"}}},
	{"offline expansion", []test{
		{rollout, "TestOfflineExpansionIsReportedAndWaitsByDefault"},
		{rollout, "TestRestartsForExpansionOneAtATimeThroughEvictions"},
	}},
	{"recovery from a failed expansion", []test{
		{rollout, "TestFailedExpansionRecoversToASmallerTemplate"},
		{rollout, "TestTemplateBelowCapacityIsAShrinkEvenAfterAFailure"},
	}},
	{"orphan re-create", []test{
		{rollout, "TestInterruptedRecreateIsFinishedFromTheRolloutRecord"},
		{converge, "TestResumeAfterCrashBetweenDeleteAndCreate"},
	}},
	{"back-to-back re-creates (kubernetes#131284)", []test{
		{converge, "TestBareRecreateRaceLosesDependents"},
		{converge, "TestBackToBackRevisionsLoseNothing"},
		{rollout, "TestBackToBackProposalsLoseNothing"},
	}},
	{"KEP-4650 stand-aside", []test{
		{rollout, "TestClaimUpdateStrategyIsReadFromTheServersOpenAPI"},
		{rollout, "TestWithoutTheGateClaimwardenRollsOut"},
	}},
	{"Flux Kustomization", []test{{e2e, "TestFluxLoop"}}},
	{"plain Helm", []test{{e2e, "TestHelmCLIUpgrade"}}},
}

// byPackage groups the tests of every scenario by package, in first-seen order.
func byPackage(ss []scenario) (pkgs []string, tests map[string][]string) {
	tests = map[string][]string{}
	for _, s := range ss {
		for _, t := range s.Tests {
			if _, ok := tests[t.Package]; !ok {
				pkgs = append(pkgs, t.Package)
			}
			tests[t.Package] = append(tests[t.Package], t.Name)
		}
	}
	return pkgs, tests
}
