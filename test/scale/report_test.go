package main

import "testing"

// The floor of a bump of 200 StatefulSets of 3 claims: one patch per claim,
// a status write and an event per step and per completion, an owner
// reference per rollout.
func TestFloorOf(t *testing.T) {
	for _, tc := range []struct {
		concurrency int
		want        int64
	}{
		{1, 600 + 2*(600+200) + 200}, // three steps per StatefulSet
		{3, 600 + 2*(200+200) + 200}, // one
	} {
		rep := &Report{Bump: bumpReport{PVCsChanged: 600}}
		rep.evaluate(options{statefulSets: 200, replicas: 3, maxConcurrentPatches: tc.concurrency})
		if rep.Bump.FloorWrites != tc.want || rep.Bump.Floor[floorJournal] != 0 {
			t.Errorf("@%d: floor %d writes, %d uncached rollout reads; want %d and 0", tc.concurrency, rep.Bump.FloorWrites, rep.Bump.Floor[floorJournal], tc.want)
		}
	}
}
