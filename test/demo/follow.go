package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// pushAndFollow starts following the objects of the story, pushes the
// StatefulSet at size, makes the tool fetch it and returns the timeline that
// prints what follows. stop ends the watches.
func pushAndFollow(ctx context.Context, cl *cluster, o options, tool gitOpsTool, from, size, message string, sts types.UID, vcr *v1alpha1.VolumeClaimRollout, out *printer) (*followed, string, func(), error) {
	return followAfter(ctx, cl, tool, "the push", sts, vcr, out, func() (string, error) {
		return push(ctx, cl, o, tool, from, size, message, out)
	})
}

// followAfter starts following the objects of the story, lets act make the
// commit (a push, a merge) and returns it, makes the tool fetch it and
// returns the timeline that prints what follows, timed from act as what.
// stop ends the watches.
func followAfter(ctx context.Context, cl *cluster, tool gitOpsTool, what string, sts types.UID, vcr *v1alpha1.VolumeClaimRollout, out *printer, act func() (string, error)) (*followed, string, func(), error) {
	// The watches start before the commit, so nothing it causes is missed.
	f, err := cl.follow(ctx, timelineSources(tool)...)
	if err != nil {
		return nil, "", nil, err
	}
	began := time.Now()
	sha, err := act()
	if err == nil {
		err = tool.fetch(ctx, cl, out)
	}
	if err != nil {
		f.stop()
		return nil, "", nil, err
	}
	out.note("What follows, as it happens (time since " + what + "):")
	return &followed{timeline: newTimeline(out, tool, began, sha, sts, vcr), f: f}, sha, f.stop, nil
}

// followed is a timeline fed by its watches.
type followed struct {
	*timeline
	f *follower
}

// until prints every change until done says so. On timeout it names the
// milestones (in story order) it was waiting for.
func (t *followed) until(ctx context.Context, cl *cluster, timeout time.Duration, done func() (bool, error), milestones ...string) error {
	err := t.f.until(ctx, cl, timeout, func(u update) (bool, error) {
		t.show(u)
		return done()
	})
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("within %s, not all of these happened (what did is above): %s", timeout, strings.Join(milestones, "; "))
	}
	return err
}
