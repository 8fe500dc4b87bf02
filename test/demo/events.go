package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// reportingController is the name claimwarden's events carry; patchedReason
// is the reason of the event for each claim patched.
const (
	reportingController = "claimwarden"
	patchedReason       = "ClaimPatched"
)

// eventsTimeout bounds the wait for events: they are written asynchronously
// by the controller's event broadcaster, shortly after the status.
const eventsTimeout = 15 * time.Second

// showEvents prints the events claimwarden emitted since began, once there is
// one ClaimPatched per claim and the completion event.
func showEvents(ctx context.Context, cl *cluster, o options, began time.Time, out *printer) error {
	var evs []eventsv1.Event
	err := wait.PollUntilContextTimeout(ctx, fixtures.Poll, eventsTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		if evs, err = claimwardenEvents(ctx, cl.client, began); err != nil {
			return false, err
		}
		return count(evs, patchedReason) >= o.replicas && count(evs, v1alpha1.ReasonCompatible) >= 1, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d ClaimPatched events and a %s event (got %d and %d): %w",
			o.replicas, v1alpha1.ReasonCompatible, count(evs, patchedReason), count(evs, v1alpha1.ReasonCompatible), err)
	}
	out.note(fmt.Sprintf("Events emitted by claimwarden (kubectl events -n %s --for statefulset/%s):", namespace, stsName))
	rows := [][]string{{"Time", "Type", "Reason", "Object", "Related", "Message"}}
	for _, ev := range evs {
		rows = append(rows, []string{
			"+" + ev.EventTime.Sub(began).Round(100*time.Millisecond).String(),
			ev.Type, ev.Reason,
			ev.Regarding.Kind + "/" + ev.Regarding.Name,
			related(ev),
			ev.Note,
		})
	}
	out.table(rows)
	return nil
}

// claimwardenEvents lists the events claimwarden emitted in the namespace
// since began, oldest first (earlier ones belong to step 2).
func claimwardenEvents(ctx context.Context, c client.Client, began time.Time) ([]eventsv1.Event, error) {
	var list eventsv1.EventList
	if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	var evs []eventsv1.Event
	for _, ev := range list.Items {
		if ev.ReportingController == reportingController && !ev.EventTime.Time.Before(began) {
			evs = append(evs, ev)
		}
	}
	slices.SortFunc(evs, func(a, b eventsv1.Event) int { return a.EventTime.Time.Compare(b.EventTime.Time) })
	return evs, nil
}

func count(evs []eventsv1.Event, reason string) int {
	n := 0
	for _, ev := range evs {
		if ev.Reason == reason {
			n++
		}
	}
	return n
}

func related(ev eventsv1.Event) string {
	if ev.Related == nil {
		return "-"
	}
	return ev.Related.Kind + "/" + ev.Related.Name
}
