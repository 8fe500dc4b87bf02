package outcome

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// One object's events stop at the burst and come back at the refill rate;
// another object's, and those related to another object, are not affected,
// and a reference to the object shares the typed object's allowance.
func TestRecorderBoundsTheEventsOfOneObject(t *testing.T) {
	rec := events.NewFakeRecorder(10 * EventBurst)
	now := time.Unix(1_700_000_000, 0)
	r := Recorder{EventRecorder: rec, limiter: newObjectLimiter(10, func() time.Time { return now })}
	web := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	webRef := &corev1.ObjectReference{Kind: "StatefulSet", Namespace: "shop", Name: "web"}
	db := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"}}
	say := func(obj *appsv1.StatefulSet, n int) {
		for range n {
			r.Eventf(obj, nil, v1alpha1.Source{}, corev1.EventTypeNormal, "R", "A", "x")
		}
	}

	say(web, EventBurst-1)
	r.Eventf(webRef, nil, v1alpha1.Source{}, corev1.EventTypeNormal, "R", "A", "by reference")
	say(web, 5)
	if got := len(drain(rec)); got != EventBurst {
		t.Errorf("%d events about web recorded, want the burst %d", got, EventBurst)
	}
	say(db, 3)
	if got := len(drain(rec)); got != 3 {
		t.Errorf("%d events about db recorded after web's burst, want 3", got)
	}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "data-web-0"}}
	r.Eventf(web, claim, v1alpha1.Source{}, corev1.EventTypeNormal, "R", "A", "related to a claim")
	if got := len(drain(rec)); got != 1 {
		t.Errorf("%d events about web related to its claim after web's own burst, want 1", got)
	}
	now = now.Add(EventRefill)
	say(web, 3)
	if got := len(drain(rec)); got != 1 {
		t.Errorf("%d events about web after one refill period, want 1", got)
	}
}

// A Recorder literal (as tests build it) records everything.
func TestRecorderLiteralIsUnbounded(t *testing.T) {
	rec := events.NewFakeRecorder(2 * EventBurst)
	r := Recorder{EventRecorder: rec}
	web := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	for range 2 * EventBurst {
		r.Eventf(web, nil, v1alpha1.Source{}, corev1.EventTypeNormal, "R", "A", "x")
	}
	if got := len(drain(rec)); got != 2*EventBurst {
		t.Errorf("%d events recorded, want %d", got, 2*EventBurst)
	}
}

// Two controllers given the one Recorder share each object's budget; Or
// keeps a Recorder it is given and makes one, bounded, only for none.
func TestOneRecorderSharesTheBudget(t *testing.T) {
	fake := events.NewFakeRecorder(10 * EventBurst)
	m := &countingRecorders{r: fake}
	one := NewRecorder(fake)
	rollout := one.Or(m)
	source := one.Or(m)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	for i := range EventBurst {
		r := rollout
		if i%2 == 1 {
			r = source
		}
		r.Eventf(sts, nil, v1alpha1.Source{}, corev1.EventTypeNormal, "Reason", "Act", "event %d", i)
	}
	source.Eventf(sts, nil, v1alpha1.Source{}, corev1.EventTypeNormal, "Reason", "Act", "one too many")
	if got := len(fake.Events); len(m.asked) != 0 || got != EventBurst {
		t.Errorf("asked for recorders %q, recorded %d events; want none asked and the burst of %d shared", m.asked, got, EventBurst)
	}
	if own := (Recorder{}).Or(m); len(m.asked) != 1 || m.asked[0] != v1alpha1.ControllerName || own.limiter == nil {
		t.Errorf("no Recorder given: asked for %q, bounded %v; want claimwarden's asked once, bounded", m.asked, own.limiter != nil)
	}
}

// countingRecorders hands out r, saying for whom it was asked.
type countingRecorders struct {
	r     recorder.EventRecorder
	asked []string
}

func (c *countingRecorders) GetEventRecorder(name string) recorder.EventRecorder {
	c.asked = append(c.asked, name)
	return c.r
}

func (c *countingRecorders) GetEventRecorderFor(string) record.EventRecorder { return nil }
