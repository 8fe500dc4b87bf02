package commitstatus

import (
	"errors"
	"fmt"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// validateStatus refuses what no host would accept, before any request:
// an unknown state, or no context. It is a PermanentError: retrying the same
// status cannot make it valid.
func validateStatus(sha string, s Status) error {
	switch {
	case s.State != Pending && s.State != Success && s.State != Failure && s.State != Error:
		return &githost.PermanentError{Err: fmt.Errorf("status state %q is not one of pending, success, failure, error", s.State)}
	case s.Context == "":
		return &githost.PermanentError{Err: errors.New("status has no context")}
	case sha == "":
		return &githost.PermanentError{Err: errors.New("status has no commit SHA")}
	}
	return nil
}
