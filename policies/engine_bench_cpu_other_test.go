//go:build !unix

package policies

import "time"

// engCPUTime is not measured here: the benchmarks then report wall time only.
func engCPUTime() time.Duration { return 0 }
