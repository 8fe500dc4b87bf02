package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// immutable is what the API server says, through Flux, Helm or Argo CD, when a
// change touches volumeClaimTemplates.
const immutable = "field is immutable"

// timeline prints what follows a commit as it happens, each line with the
// time since the push: the GitOps tool's verdicts, the StatefulSet deleted
// and created again, claimwarden's events and the rollout's progress. It
// also remembers when each milestone of the story was reached.
type timeline struct {
	out   *printer
	began time.Time
	tool  gitOpsTool
	// sha is the commit pushed.
	sha string

	// toolLast and toolTried are the tool's show's memory: the state of its
	// object last printed, and the last revision printed as attempted.
	toolLast, toolTried string
	// otherFailure is the first failure of the tool on sha that was not the
	// API server's refusal; appliedBy says who started the operation that
	// applied sha. Only Argo CD tells these.
	otherFailure, appliedBy string
	// released is the chart release that applied sha, nudged the token of
	// claimwarden's request to upgrade again. Only helm-controller tells these.
	released, nudged string

	rollout *progress
	vcr     *v1alpha1.VolumeClaimRollout
	claims  map[string]string // each claim's line as last printed
	sts     types.UID
	events  map[string]bool // names of the events printed
	patched int             // ClaimPatched events seen

	// Milestones: zero until reached.
	failed, applied, recreated time.Duration
}

// timelineSources are the watches a timeline of tool reads, from now on.
func timelineSources(tool gitOpsTool) []source {
	return []source{
		tool.watch(),
		{list: &appsv1.StatefulSetList{}, opts: named(namespace, stsName)},
		{list: &v1alpha1.VolumeClaimRolloutList{}, opts: named(namespace, stsName)},
		// claimwarden's events regard the tool's object (in the tool's
		// namespace) and the StatefulSet (demo); only they are printed.
		{list: &eventsv1.EventList{}},
	}
}

// newTimeline starts a timeline for the commit sha pushed at began, from the
// StatefulSet and rollout as they were before (their states are not news).
func newTimeline(out *printer, tool gitOpsTool, began time.Time, sha string, sts types.UID, vcr *v1alpha1.VolumeClaimRollout) *timeline {
	t := &timeline{out: out, tool: tool, began: began, sha: sha, sts: sts, vcr: vcr, claims: map[string]string{}, events: map[string]bool{}}
	t.rollout = &progress{out: out, began: t.began}
	t.rollout.last = t.vcrKey(vcr)
	for i, l := range t.rollout.claimLines(vcr) {
		t.claims[vcr.Status.Claims[i].Name] = l
	}
	return t
}

// show prints u if it is news.
func (t *timeline) show(u update) {
	switch o := u.obj.(type) {
	case *appsv1.StatefulSet:
		t.statefulSet(o, u.deleted)
	case *v1alpha1.VolumeClaimRollout:
		if u.deleted {
			t.line(t.out.paint(red, "vcr/"+o.Name+" deleted"))
			return
		}
		t.rolloutChanged(o)
	case *eventsv1.Event:
		t.event(o, u.deleted)
	default:
		if !u.deleted {
			t.tool.show(t, u.obj)
		}
	}
}

// line prints s at the current time; more lines go below it, indented.
func (t *timeline) line(s string, more ...string) {
	t.out.note(fmt.Sprintf("  %-7s %s", "+"+since(t.began).String(), s))
	for _, m := range more {
		t.out.note(fmt.Sprintf("  %-7s   %s", "", m))
	}
}

// statefulSet prints the StatefulSet's deletion and its creation under a new UID.
func (t *timeline) statefulSet(sts *appsv1.StatefulSet, deleted bool) {
	switch {
	case deleted:
		t.line(fmt.Sprintf("statefulset/%s  deleted (uid %s), orphaning its Pods and claims", sts.Name, sts.UID))
	case sts.UID != t.sts:
		t.recreated = since(t.began)
		t.line(fmt.Sprintf("statefulset/%s  created again (uid %s), volumeClaimTemplate data requests %s",
			sts.Name, sts.UID, templateSize(sts)))
		t.sts = sts.UID
	}
}

// rolloutChanged prints the rollout when its claims, progress or conditions
// changed: the Ready condition, then a line per claim.
func (t *timeline) rolloutChanged(v *v1alpha1.VolumeClaimRollout) {
	t.vcr = v
	key := t.vcrKey(v)
	if key == t.rollout.last {
		return
	}
	t.rollout.last = key
	status, reason, msg := "Ready=-", "", ""
	if c := apimeta.FindStatusCondition(v.Status.Conditions, meta.ReadyCondition); c != nil {
		status, reason, msg = "Ready="+string(c.Status), c.Reason, c.Message
	}
	if c := stalled(v); c != nil {
		status = t.out.paint(red, status+"  Stalled=True")
		msg = c.Message
	}
	head := fmt.Sprintf("vcr/%s  %s  %s  %s compatible", v.Name, status, reason, v.Status.Progress)
	if strings.HasPrefix(msg, v.Status.Progress) {
		msg = "" // "3/3 claims compatible" says the progress again
	}
	var more []string
	if msg != "" {
		more = wrapQuote(t.out, shortSHAs(msg))
	}
	// Only the claims whose line changed: the others are as printed before.
	for i, l := range t.rollout.claimLines(v) {
		name := v.Status.Claims[i].Name
		if t.claims[name] != l {
			t.claims[name] = l
			more = append(more, l)
		}
	}
	t.line(head, more...)
}

// vcrKey is what makes a rollout state news: its claims, progress and the
// reasons of its conditions. (The controller writes the status in several
// requests; keying on these prints each step once.)
func (t *timeline) vcrKey(v *v1alpha1.VolumeClaimRollout) string {
	key := v.Status.Progress + "\n" + strings.Join(t.rollout.claimLines(v), "\n")
	for _, c := range v.Status.Conditions {
		if c.Type == meta.ReadyCondition || c.Type == meta.StalledCondition {
			key += "\n" + c.Type + string(c.Status) + c.Reason
		}
	}
	return key
}

// event prints each of claimwarden's events once, except ClaimPatched: the
// rollout's claim lines say the same ("patched PVC ..."), so those are
// counted. The notes of the events that mirror the rollout's conditions
// (actions Block and Complete) are left out: the rollout's lines print them.
func (t *timeline) event(ev *eventsv1.Event, deleted bool) {
	if deleted || ev.ReportingController != reportingController || t.events[ev.Namespace+"/"+ev.Name] {
		return
	}
	t.events[ev.Namespace+"/"+ev.Name] = true
	if ev.Reason == patchedReason {
		t.patched++
		return
	}
	kind := t.out.paint(green, ev.Type)
	if ev.Type != "Normal" {
		kind = t.out.paint(red, ev.Type)
	}
	var note []string
	if ev.Action != "Block" && ev.Action != "Complete" {
		note = wrapQuote(t.out, shortSHAs(ev.Note))
	}
	t.line(fmt.Sprintf("event  %s  %s  %s/%s", kind, ev.Reason, strings.ToLower(ev.Regarding.Kind), ev.Regarding.Name), note...)
}

// rolloutAt reports whether the rollout is Ready with every claim at size.
func (t *timeline) rolloutAt(size string, replicas int) bool {
	return t.vcr != nil && apimeta.IsStatusConditionTrue(t.vcr.Status.Conditions, meta.ReadyCondition) && claimsAt(t.vcr, size, replicas)
}

// stalled returns the rollout's Stalled condition when it is True.
func stalled(v *v1alpha1.VolumeClaimRollout) *metav1.Condition {
	if c := apimeta.FindStatusCondition(v.Status.Conditions, meta.StalledCondition); c != nil && c.Status == metav1.ConditionTrue {
		return c
	}
	return nil
}

// proposedBy reports whether the rollout works towards the commit sha.
func proposedBy(v *v1alpha1.VolumeClaimRollout, sha string) bool {
	return v != nil && v.Status.Proposal != nil && strings.HasSuffix(v.Status.Proposal.Source.Revision, sha)
}

func templateSize(sts *appsv1.StatefulSet) string {
	if len(sts.Spec.VolumeClaimTemplates) == 0 {
		return "-"
	}
	return quantity(sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage])
}

// wrapQuote paints a message from elsewhere like printer.quote, a line per
// line of it, for a timeline entry.
func wrapQuote(out *printer, msg string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(msg), "\n") {
		lines = append(lines, out.paint(yellow, l))
	}
	return lines
}
