package gitstatus

import (
	"errors"
	"fmt"
)

// validateStatus refuses what no host would accept, before any request:
// an unknown state, or no context. It is a PermanentError: retrying the same
// status cannot make it valid.
func validateStatus(sha string, s Status) error {
	switch {
	case s.State != Pending && s.State != Success && s.State != Failure && s.State != Error:
		return &PermanentError{Err: fmt.Errorf("status state %q is not one of pending, success, failure, error", s.State)}
	case s.Context == "":
		return &PermanentError{Err: errors.New("status has no context")}
	case sha == "":
		return &PermanentError{Err: errors.New("status has no commit SHA")}
	}
	return nil
}
