package benchkit

import "strings"

// CountStarts counts, in the controller's JSON log, the controllers that
// started their watches (controller-runtime logs "Starting Controller"),
// those whose workers started (it logs "Starting workers" once their
// caches synced), and, of those, the rollout controllers: the hub's
// "volumeclaimrollout" and one "volumeclaimrollout-<cluster>" per spoke.
func CountStarts(log string) (starting, workers, rollouts int) {
	for line := range strings.Lines(log) {
		switch {
		case strings.Contains(line, `"msg":"Starting Controller"`):
			starting++
		case strings.Contains(line, `"msg":"Starting workers"`):
			workers++
			if strings.Contains(line, `"controller":"volumeclaimrollout"`) || strings.Contains(line, `"controller":"volumeclaimrollout-`) {
				rollouts++
			}
		}
	}
	return starting, workers, rollouts
}
