package benchkit

import "testing"

func TestCountStarts(t *testing.T) {
	log := `{"msg":"Starting Controller","controller":"volumeclaimrollout"}
{"msg":"Starting Controller","controller":"volumeclaimrollout-sim-00"}
{"msg":"Starting Controller","controller":"policy-configmaps"}
{"msg":"Starting workers","controller":"volumeclaimrollout-sim-00","worker count":16}
{"msg":"Starting workers","controller":"policy-configmaps","worker count":1}
{"msg":"Starting workers","controller":"volumeclaimrollouts-elsewhere","worker count":1}
`
	if s, w, r := CountStarts(log); s != 3 || w != 3 || r != 1 {
		t.Errorf("CountStarts = %d, %d, %d; want 3 starting, 3 with workers, 1 rollout", s, w, r)
	}
}
