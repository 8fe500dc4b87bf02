package converge_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/claimwarden/claimwarden/reconciler/converge"
)

// settle takes the outcome of Converge or Resume and, while it is Waiting,
// calls Resume again as the rollout controller's requeues do, until the old
// object is gone and another outcome (or an error) comes back. It fails the
// test when the orphan delete does not finish within a minute.
func settle(ctx context.Context, t *testing.T, conv *converge.Converger, ns string,
	progress converge.Progress, err error) (converge.Progress, error) {
	t.Helper()
	if err != nil || progress != converge.Waiting {
		return progress, err
	}
	began := time.Now()
	perr := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, false, func(ctx context.Context) (bool, error) {
		progress, err = conv.Resume(ctx, key(ns))
		return err != nil || progress != converge.Waiting, nil
	})
	if perr != nil {
		t.Fatalf("Resume still %q after %s: %v", progress, time.Since(began).Round(time.Millisecond), perr)
	}
	t.Logf("Resume reported %q (error: %v) %s after the first wait", progress, err, time.Since(began).Round(time.Millisecond))
	return progress, err
}
