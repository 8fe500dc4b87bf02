//go:build !linux

package sandbox

import (
	"errors"
	"time"
)

// confine refuses: without Linux's resource limits a child would run what
// a tenant wrote unbounded, so nothing runs (fail closed).
func confine(int64, time.Duration) error {
	return errors.New("the sandbox's limits need Linux")
}
