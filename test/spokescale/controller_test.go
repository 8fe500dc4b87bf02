package main

import "testing"

func TestCountStarts(t *testing.T) {
	log := `{"msg":"Starting Controller","controller":"volumeclaimrollout"}
{"msg":"Starting Controller","controller":"volumeclaimrollout-sim-00"}
{"msg":"Starting Controller","controller":"policy-configmaps"}
{"msg":"Starting workers","controller":"volumeclaimrollout-sim-00","worker count":16}
{"msg":"Starting workers","controller":"policy-configmaps","worker count":1}
`
	if s, w, r := countStarts(log); s != 3 || w != 2 || r != 1 {
		t.Errorf("countStarts = %d, %d, %d; want 3 starting, 2 with workers, 1 rollout", s, w, r)
	}
}
