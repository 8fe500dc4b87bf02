package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// rolloutTimeout bounds step 5: each claim takes about one simulated resize,
// the rest is API round trips; twice that plus a minute means it is stuck.
func rolloutTimeout(o options) time.Duration {
	return time.Minute + 2*time.Duration(o.replicas)*o.delay
}

// followRollout prints the VolumeClaimRollout each time it changes until
// every claim is compatible with the new template, then shows the result.
func followRollout(ctx context.Context, cl *cluster, o options, before *v1alpha1.VolumeClaimRollout, began time.Time, pods map[string]types.UID, out *printer) error {
	out.step("claimwarden brings the claims to the new template")
	out.note(fmt.Sprintf("Patching is instant; Resizing waits for the (simulated) storage, %s per volume.", o.delay))
	out.cmd(fmt.Sprintf("kubectl get vcr %s -n %s --watch    # plus the claims in .status.claims", stsName, namespace))
	p := &progress{out: out, began: began}
	// Step 2 showed this state already; only changes are news.
	p.last, _ = p.render(before)
	p.header()
	// Watching from the version step 2 saw replays every status write since,
	// even ones seconds apart would miss.
	f, err := cl.follow(ctx, source{list: &v1alpha1.VolumeClaimRolloutList{}, opts: named(namespace, stsName), rv: before.ResourceVersion})
	if err != nil {
		return err
	}
	defer f.stop()
	err = f.until(ctx, cl, rolloutTimeout(o), func(u update) (bool, error) {
		if u.deleted {
			return false, fmt.Errorf("VolumeClaimRollout %s was deleted", stsKey)
		}
		v := u.obj.(*v1alpha1.VolumeClaimRollout)
		if c := apimeta.FindStatusCondition(v.Status.Conditions, meta.StalledCondition); c != nil && c.Status == metav1.ConditionTrue {
			p.show(v, true)
			return false, fmt.Errorf("the rollout stalled (%s): %s", c.Reason, c.Message)
		}
		done := apimeta.IsStatusConditionTrue(v.Status.Conditions, meta.ReadyCondition) && claimsAt(v, sizeAfter, o.replicas)
		p.show(v, done)
		return done, nil
	})
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("the claims were not all compatible with the new template within %s (last state above)", rolloutTimeout(o))
	}
	if err != nil {
		return fmt.Errorf("following VolumeClaimRollout %s: %w", stsKey, err)
	}
	out.ok(fmt.Sprintf("Ready after %s: every claim is %s, patched one at a time, highest ordinal first", since(began), sizeAfter))

	if err := showClaims(ctx, cl.client, out); err != nil {
		return err
	}
	if err := claimsCapacity(ctx, cl.client, sizeAfter); err != nil {
		return err
	}
	if err := showEvents(ctx, cl, o, began, out); err != nil {
		return err
	}
	now, err := podUIDs(ctx, cl.client)
	if err != nil {
		return err
	}
	showPods(now, pods, out)
	if err := sameUIDs(pods, now); err != nil {
		return err
	}
	out.ok("volumes grown from " + sizeBefore + " to " + sizeAfter + " without deleting a single Pod")
	return nil
}

// progress prints rollout states as a table that reads like `kubectl get
// vcr` with a line per claim below it.
type progress struct {
	out   *printer
	began time.Time
	last  string // claim lines and progress of the last state printed
}

// rowFormat lays out the `kubectl get vcr` columns after the TIME column.
const rowFormat = "%-4s %-8s %-11s %-9s %-7s %-10s %-9s %s"

func (p *progress) header() {
	p.out.note(fmt.Sprintf("  %-7s "+rowFormat, "TIME", "NAME", "READY", "COMPATIBLE", "UPDATING", "DENIED", "OVERSIZED", "CAPACITY", "STATUS"))
}

// show prints v when its claims or progress changed since the last state
// printed, or when final. The controller writes conditions and the rest of
// the status in separate requests, so a watch sees half-written states in
// between (e.g. Ready=True over a claim still Resizing); keying on the claims
// prints each step once, with consistent columns.
func (p *progress) show(v *v1alpha1.VolumeClaimRollout, final bool) {
	key, lines := p.render(v)
	if key == p.last && !final {
		return
	}
	p.last = key
	p.out.note(fmt.Sprintf("  %-7s %s", "+"+since(p.began).String(), lines[0]))
	for _, l := range lines[1:] {
		p.out.note(fmt.Sprintf("  %-7s %s", "", l))
	}
}

// render returns v's row and claim lines, and the part of them that decides
// whether v is news.
func (p *progress) render(v *v1alpha1.VolumeClaimRollout) (string, []string) {
	ready := apimeta.FindStatusCondition(v.Status.Conditions, meta.ReadyCondition)
	readyStatus, readyMsg := "-", ""
	if ready != nil {
		readyStatus, readyMsg = string(ready.Status), ready.Message
	}
	n := v.Status.Counts
	lines := []string{fmt.Sprintf(rowFormat, v.Name, readyStatus, v.Status.Progress,
		fmt.Sprint(n.Updating), fmt.Sprint(n.Denied), fmt.Sprint(n.OverSized), n.Capacity, readyMsg)}
	lines = append(lines, p.claimLines(v)...)
	return v.Status.Progress + "\n" + strings.Join(lines[1:], "\n"), lines
}

// claimLines returns a line per claim of v: name, phase, change and message.
func (p *progress) claimLines(v *v1alpha1.VolumeClaimRollout) []string {
	var lines []string
	width := 0
	for _, c := range v.Status.Claims {
		width = max(width, len(c.Name))
	}
	for _, c := range v.Status.Claims {
		change := c.From + " → " + c.To
		if c.From == c.To {
			change = c.To
		}
		msg := c.Message
		if strings.EqualFold(msg, string(c.Phase)) {
			msg = "" // "Compatible  compatible" says it twice
		}
		line := fmt.Sprintf("  %-*s  %s  %-11s  %s", width, c.Name, p.phase(c.Phase), change, msg)
		lines = append(lines, strings.TrimRight(line, " "))
	}
	return lines
}

// phase pads the phase before painting it, so the escape codes do not shift columns.
func (p *progress) phase(ph v1alpha1.ClaimPhase) string {
	s := fmt.Sprintf("%-10s", ph)
	switch ph {
	case v1alpha1.ClaimCompatible:
		return p.out.paint(green, s)
	case v1alpha1.ClaimPatching, v1alpha1.ClaimResizing:
		return p.out.paint(yellow, s)
	case v1alpha1.ClaimFailed, v1alpha1.ClaimDenied:
		return p.out.paint(red, s)
	}
	return p.out.paint(dim, s)
}
