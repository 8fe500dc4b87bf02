package main

import (
	"fmt"
	"strings"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fluxenv"
)

// immutable is what the API server says, through Flux, when a change touches
// volumeClaimTemplates.
const immutable = "field is immutable"

// timeline prints what follows a commit as it happens, each line with the
// time since the push: the Kustomization's verdicts, the StatefulSet deleted
// and created again, claimwarden's events and the rollout's progress. It
// also remembers when each milestone of the story was reached.
type timeline struct {
	out   *printer
	began time.Time
	// want is the revision pushed.
	want string

	rollout *progress
	ks      *kustomizev1.Kustomization
	ksLast  string
	tried   string // the last revision printed as attempted
	vcr     *v1alpha1.VolumeClaimRollout
	claims  map[string]string // each claim's line as last printed
	sts     types.UID
	events  map[string]bool // names of the events printed
	patched int             // ClaimPatched events seen

	// Milestones: zero until reached.
	failed, applied, recreated time.Duration
}

// timelineSources are the watches a timeline reads, from now on.
func timelineSources() []source {
	return []source{
		{list: &kustomizev1.KustomizationList{}, opts: named(fluxNamespace, repoName)},
		{list: &appsv1.StatefulSetList{}, opts: named(namespace, stsName)},
		{list: &v1alpha1.VolumeClaimRolloutList{}, opts: named(namespace, stsName)},
		// claimwarden's events regard the Kustomization (flux-system) and the
		// StatefulSet (demo); only they are printed.
		{list: &eventsv1.EventList{}},
	}
}

// newTimeline starts a timeline for the commit sha pushed at began, from the
// StatefulSet and rollout as they were before (their states are not news).
func newTimeline(out *printer, began time.Time, sha string, sts types.UID, vcr *v1alpha1.VolumeClaimRollout) *timeline {
	t := &timeline{out: out, began: began, want: revision(sha), sts: sts, vcr: vcr, claims: map[string]string{}, events: map[string]bool{}}
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
	case *kustomizev1.Kustomization:
		t.kustomization(o)
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
	}
}

// line prints s at the current time; more lines go below it, indented.
func (t *timeline) line(s string, more ...string) {
	t.out.note(fmt.Sprintf("  %-7s %s", "+"+since(t.began).String(), s))
	for _, m := range more {
		t.out.note(fmt.Sprintf("  %-7s   %s", "", m))
	}
}

// kustomization prints each new revision Flux attempts, and each distinct
// outcome of an attempt (Ready True or False; the other Unknowns are Flux at
// work, and a Ready=True written before lastAppliedRevision is half a status).
func (t *timeline) kustomization(ks *kustomizev1.Kustomization) {
	t.ks = ks
	c := apimeta.FindStatusCondition(ks.Status.Conditions, meta.ReadyCondition)
	if c == nil {
		return
	}
	if c.Status == metav1.ConditionUnknown {
		if attempted := ks.Status.LastAttemptedRevision; attempted != t.tried && attempted != ks.Status.LastAppliedRevision {
			t.tried = attempted
			t.line(fmt.Sprintf("kustomization/%s  Ready=Unknown  %s  attempting %s", ks.Name, c.Reason, shortSHAs(attempted)))
		}
		return
	}
	if c.Status == metav1.ConditionTrue && ks.Status.LastAppliedRevision != ks.Status.LastAttemptedRevision {
		return
	}
	ok, _, _ := fluxenv.Ready(ks)
	if ks.Status.LastAttemptedRevision == t.want {
		switch {
		case !ok && strings.Contains(c.Message, immutable) && t.failed == 0:
			t.failed = since(t.began)
		case ok && ks.Status.LastAppliedRevision == t.want && t.applied == 0:
			t.applied = since(t.began)
		}
	}
	key := strings.Join([]string{string(c.Status), c.Reason, c.Message, ks.Status.LastAttemptedRevision, ks.Status.LastAppliedRevision}, "\n")
	if key == t.ksLast {
		return
	}
	t.ksLast = key
	status := t.out.paint(green, "Ready=True")
	if c.Status != metav1.ConditionTrue {
		status = t.out.paint(red, "Ready="+string(c.Status))
	}
	t.line(fmt.Sprintf("kustomization/%s  %s  %s  (applied %s, attempted %s)", ks.Name, status, c.Reason,
		shortSHAs(ks.Status.LastAppliedRevision), shortSHAs(ks.Status.LastAttemptedRevision)),
		wrapQuote(t.out, shortSHAs(elideValue(c.Message)))...)
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
