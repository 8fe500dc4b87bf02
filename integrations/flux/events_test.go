package flux

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

const (
	testSHA      = "5394cb7f48332b2de7c17dd8b8384bbc84b7e738"
	testRevision = "main@sha1:" + testSHA
)

// request is what the fake notification-controller received.
type request struct {
	method, path, contentType string
	body                      []byte
}

// receiver stands in for notification-controller's event receiver (the real
// one cannot be built here). It records every request and answers status;
// while hold is set, it does not answer until release is called, to stand
// for a receiver that is slow or hangs.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	status int

	mu       sync.Mutex
	requests []request
	arrived  chan struct{}
	hold     chan struct{}
}

func newReceiver(t *testing.T, status int) *receiver {
	t.Helper()
	r := &receiver{t: t, status: status, arrived: make(chan struct{}, 1000)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			t.Errorf("reading the request body: %v", err)
		}
		r.mu.Lock()
		r.requests = append(r.requests, request{req.Method, req.URL.Path, req.Header.Get("Content-Type"), body})
		hold := r.hold
		r.mu.Unlock()
		r.arrived <- struct{}{}
		if hold != nil {
			select {
			case <-hold:
			case <-req.Context().Done():
			}
		}
		w.WriteHeader(r.status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// url is the receiver's address as an operator would configure it,
// with the trailing slash of Flux's --events-addr.
func (r *receiver) url() string { return r.srv.URL + "/" }

func (r *receiver) holdAnswers() {
	r.mu.Lock()
	r.hold = make(chan struct{})
	r.mu.Unlock()
}

func (r *receiver) release() {
	r.mu.Lock()
	if r.hold != nil {
		close(r.hold)
		r.hold = nil
	}
	r.mu.Unlock()
}

// waitArrival waits for the next request to arrive.
func (r *receiver) waitArrival() {
	r.t.Helper()
	select {
	case <-r.arrived:
	case <-time.After(10 * time.Second):
		r.t.Fatal("no request reached the receiver within 10s")
	}
}

func (r *receiver) got() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.requests...)
}

// messages returns the message of every event received, in order.
func (r *receiver) messages() []string {
	r.t.Helper()
	var out []string
	for _, req := range r.got() {
		var ev struct{ Message string }
		if err := json.Unmarshal(req.body, &ev); err != nil {
			r.t.Fatalf("request body is not JSON: %v\n%s", err, req.body)
		}
		out = append(out, ev.Message)
	}
	return out
}

// logSink collects what the Notifier and the recorder log.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (s *logSink) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		s.mu.Lock()
		s.lines = append(s.lines, args)
		s.mu.Unlock()
	}, funcr.Options{})
}

func (s *logSink) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

func (s *logSink) contains(sub string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.lines {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

func newTestNotifier(t *testing.T, r *receiver, log logr.Logger) *Notifier {
	t.Helper()
	n, err := NewNotifier(r.url(), "claimwarden", log)
	if err != nil {
		t.Fatalf("NewNotifier: %v", err)
	}
	return n
}

func flush(t *testing.T, n *Notifier) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := n.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

// stsKey names the StatefulSet a rollout is about.
func stsKey(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// fromKustomization is the source of a proposal the Kustomization
// flux-system/<name> made at revision.
func fromKustomization(name, revision string) v1alpha1.Source {
	return v1alpha1.Source{Kind: KustomizationKind, Namespace: "flux-system", Name: name, Revision: revision}
}

// TestNotifySendsEventAboutKustomization checks the whole request
// notification-controller receives for a Flux-applied StatefulSet: the
// fields it selects Alerts by, derives the commit status from, and keeps.
func TestNotifySendsEventAboutKustomization(t *testing.T) {
	r := newReceiver(t, http.StatusAccepted)
	n := newTestNotifier(t, r, logr.Discard())

	// "%" in the description: the message must reach the receiver as
	// written, not be read as a format string.
	desc := "3 claims resized to 20Gi (100% done)"
	if !n.Notify(context.Background(), stsKey("db", "pg"), fromKustomization("apps", testRevision), "success", "ResizeSucceeded", desc) {
		t.Fatal("Notify returned false for a rollout a Kustomization proposed")
	}
	flush(t, n)

	got := r.got()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(got))
	}
	req := got[0]
	if req.method != http.MethodPost || req.path != "/" || req.contentType != "application/json" {
		t.Errorf("request = %s %s (Content-Type %q), want POST / (application/json)", req.method, req.path, req.contentType)
	}

	var body map[string]any
	if err := json.Unmarshal(req.body, &body); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, req.body)
	}
	hostname, _ := os.Hostname()
	want := map[string]any{
		"involvedObject": map[string]any{
			"kind":       "Kustomization",
			"apiVersion": "kustomize.toolkit.fluxcd.io/v1",
			"namespace":  "flux-system",
			"name":       "apps",
		},
		"severity":            "info",
		"message":             "db/pg: " + desc,
		"reason":              "ResizeSucceeded",
		"action":              "PVCResizeRollout",
		"reportingController": "claimwarden",
		"reportingInstance":   hostname,
		"metadata": map[string]any{
			"kustomize.toolkit.fluxcd.io/revision":            testRevision,
			"kustomize.toolkit.fluxcd.io/token":               "success",
			"event.toolkit.fluxcd.io/commit":                  testSHA,
			"event.toolkit.fluxcd.io/claimwarden-state":       "success",
			"event.toolkit.fluxcd.io/claimwarden-statefulset": "db/pg",
			"claimwarden.dev/state":                           "success",
			"claimwarden.dev/statefulset":                     "db/pg",
		},
	}
	ts, ok := body["timestamp"].(string)
	if !ok {
		t.Fatalf("timestamp missing or not a string: %v", body["timestamp"])
	}
	if at, err := time.Parse(time.RFC3339, ts); err != nil || time.Since(at) > time.Minute || time.Until(at) > time.Minute {
		t.Errorf("timestamp %q is not an RFC 3339 time of about now (%v)", ts, err)
	}
	delete(body, "timestamp")
	if !reflect.DeepEqual(body, want) {
		gotJSON, _ := json.MarshalIndent(body, "", "  ")
		wantJSON, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("event body:\n%s\nwant (timestamp aside):\n%s", gotJSON, wantJSON)
	}
}

// TestNotifySeverity checks the state to severity mapping: the Git
// providers of notification-controller post error as a failed status and
// info as a successful one.
func TestNotifySeverity(t *testing.T) {
	for state, want := range map[string]string{
		"pending": "info",
		"success": "info",
		"failure": "error",
		"error":   "error",
	} {
		t.Run(state, func(t *testing.T) {
			r := newReceiver(t, http.StatusAccepted)
			n := newTestNotifier(t, r, logr.Discard())
			if !n.Notify(context.Background(), stsKey("db", "pg"), fromKustomization("apps", testRevision), state, "Reason", "d") {
				t.Fatal("Notify returned false")
			}
			flush(t, n)
			got := r.got()
			if len(got) != 1 {
				t.Fatalf("receiver got %d requests, want 1", len(got))
			}
			var ev struct {
				Severity string
				Metadata map[string]string
			}
			if err := json.Unmarshal(got[0].body, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.Severity != want {
				t.Errorf("severity = %q, want %q", ev.Severity, want)
			}
			if ev.Metadata[MetaState] != state || ev.Metadata[MetaFluxState] != state {
				t.Errorf("state metadata = %q, %q, want %q", ev.Metadata[MetaState], ev.Metadata[MetaFluxState], state)
			}
		})
	}
}

// TestNotifySkipsWhatFluxCannotReportOn covers every case in which nothing
// may be sent. The last Notify is one that must be sent: as events are sent
// in order, the receiver seeing only that one proves the earlier calls sent
// nothing (rather than that they had not arrived yet).
func TestNotifySkipsWhatFluxCannotReportOn(t *testing.T) {
	r := newReceiver(t, http.StatusAccepted)
	logs := &logSink{}
	n := newTestNotifier(t, r, logs.logger())
	ctx := context.Background()

	noNamespace := fromKustomization("apps", testRevision)
	noNamespace.Namespace = ""
	live := v1alpha1.Source{Kind: "StatefulSet", Namespace: "db", Name: "e", Repository: "https://github.com/org/apps", Revision: testRevision}
	canceled, cancel := context.WithCancel(ctx)
	cancel()

	for _, c := range []struct {
		name  string
		ctx   context.Context
		src   v1alpha1.Source
		state string
	}{
		{"no source", ctx, v1alpha1.Source{}, "success"},
		{"the StatefulSet's own templates", ctx, live, "success"},
		{"proposed by a HelmRelease", ctx, v1alpha1.Source{Kind: "HelmRelease", Namespace: "flux-system", Name: "pg", Revision: testRevision}, "success"},
		{"proposed by an Argo CD Application", ctx, v1alpha1.Source{Kind: "Application", Namespace: "argocd", Name: "apps", Revision: testSHA}, "success"},
		{"no Kustomization namespace", ctx, noNamespace, "success"},
		{"no Kustomization name", ctx, fromKustomization("", testRevision), "success"},
		{"no revision", ctx, fromKustomization("apps", ""), "success"},
		{"unknown state", ctx, fromKustomization("apps", testRevision), "succeeded"},
		{"caller gave up", canceled, fromKustomization("apps", testRevision), "success"},
	} {
		if n.Notify(c.ctx, stsKey("db", "h"), c.src, c.state, "Reason", "d") {
			t.Errorf("%s: Notify returned true, want false", c.name)
		}
	}
	if !logs.contains("unknown rollout state") {
		t.Error("the unknown state was not logged")
	}
	// Refused calls are not remembered: the canceled call's event goes out
	// once the caller asks again with a live context.
	if !n.Notify(ctx, stsKey("db", "h"), fromKustomization("apps", testRevision), "success", "Reason", "d") {
		t.Fatal("Notify of a rollout a Kustomization proposed returned false")
	}
	flush(t, n)
	if got, want := r.messages(), []string{"db/h: d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("receiver got messages %q, want only %q", got, want)
	}
}

// TestNotifyDeduplicates checks that an outcome is sent once, and that each
// component of the key (and only those) makes a new outcome.
func TestNotifyDeduplicates(t *testing.T) {
	r := newReceiver(t, http.StatusAccepted)
	n := newTestNotifier(t, r, logr.Discard())
	ctx := context.Background()
	sts, src := stsKey("db", "pg"), fromKustomization("apps", testRevision)
	const otherRevision = "main@sha1:0000000000000000000000000000000000000001"

	steps := []struct {
		name               string
		sts                types.NamespacedName
		src                v1alpha1.Source
		state, reason, msg string
		want               bool
	}{
		{"first", sts, src, "pending", "Resizing", "resizing", true},
		{"same again", sts, src, "pending", "Resizing", "resizing", false},
		{"same outcome, other reason", sts, src, "pending", "StillResizing", "resizing", false},
		{"other description", sts, src, "pending", "Resizing", "resizing 2/3", true},
		{"other state", sts, src, "success", "Resizing", "resizing", true},
		{"other revision", sts, fromKustomization("apps", otherRevision), "pending", "Resizing", "resizing", true},
		{"other StatefulSet", stsKey("db", "redis"), src, "pending", "Resizing", "resizing", true},
		{"other Kustomization", sts, fromKustomization("apps-2", testRevision), "pending", "Resizing", "resizing", true},
		{"first, once more", sts, src, "pending", "Resizing", "resizing", false},
	}
	sent := 0
	for _, s := range steps {
		if got := n.Notify(ctx, s.sts, s.src, s.state, s.reason, s.msg); got != s.want {
			t.Errorf("%s: Notify = %v, want %v", s.name, got, s.want)
		}
		if s.want {
			sent++
		}
	}
	flush(t, n)
	if got := len(r.got()); got != sent {
		t.Errorf("receiver got %d events, want %d", got, sent)
	}
}

// TestNotifyForgetsOldestBeyondMemory checks that the deduplication memory
// is bounded and forgets the least recently seen outcome first.
func TestNotifyForgetsOldestBeyondMemory(t *testing.T) {
	r := newReceiver(t, http.StatusAccepted)
	n := newTestNotifier(t, r, logr.Discard())
	n.sent.Resize(2)
	ctx := context.Background()
	sts, src := stsKey("db", "pg"), fromKustomization("apps", testRevision)
	notify := func(desc string) bool { return n.Notify(ctx, sts, src, "pending", "R", desc) }

	for _, step := range []struct {
		desc string
		want bool
	}{
		{"a", true}, {"b", true},
		{"a", false}, // a is now the most recent, b the oldest
		{"c", true},  // forgets b
		{"a", false}, // still remembered
		{"b", true},  // forgotten, so sent again
	} {
		if got := notify(step.desc); got != step.want {
			t.Errorf("Notify(%q) = %v, want %v", step.desc, got, step.want)
		}
	}
	if n.sent.Len() != 2 {
		t.Errorf("memory holds %d keys, want 2", n.sent.Len())
	}
	flush(t, n)
}

// TestNotifyDoesNotBlockAndKeepsOrder holds the receiver's answer: Notify
// must still return at once, and the events must arrive in the order they
// were notified, or a pending event could overwrite the failure after it.
func TestNotifyDoesNotBlockAndKeepsOrder(t *testing.T) {
	r := newReceiver(t, http.StatusAccepted)
	r.holdAnswers()
	defer r.release()
	n := newTestNotifier(t, r, logr.Discard())
	ctx := context.Background()
	sts, src := stsKey("db", "pg"), fromKustomization("apps", testRevision)

	start := time.Now()
	for _, state := range []string{"pending", "failure", "success"} {
		if !n.Notify(ctx, sts, src, state, "R", state) {
			t.Fatalf("Notify(%s) returned false", state)
		}
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Notify blocked for %v while the receiver did not answer", d)
	}
	r.waitArrival() // the first event is in flight and unanswered

	// Flush honours its context while an event hangs.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := n.Flush(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Flush with a receiver that does not answer = %v, want context.DeadlineExceeded", err)
	}

	r.release()
	flush(t, n)
	if got, want := r.messages(), []string{"db/pg: pending", "db/pg: failure", "db/pg: success"}; !reflect.DeepEqual(got, want) {
		t.Errorf("events arrived as %q, want %q", got, want)
	}
}

// TestNotifyBoundsTheQueue fills the queue behind an event the receiver
// does not answer: the next event is refused, not remembered, and can be
// notified again once the queue has drained.
func TestNotifyBoundsTheQueue(t *testing.T) {
	r := newReceiver(t, http.StatusAccepted)
	r.holdAnswers()
	defer r.release()
	logs := &logSink{}
	n := newTestNotifier(t, r, logs.logger())
	n.maxQueued = 2
	ctx := context.Background()
	sts, src := stsKey("db", "pg"), fromKustomization("apps", testRevision)
	notify := func(desc string) bool { return n.Notify(ctx, sts, src, "pending", "R", desc) }

	if !notify("1") {
		t.Fatal("Notify(1) returned false")
	}
	r.waitArrival() // 1 is in flight, the queue is empty
	if !notify("2") || !notify("3") {
		t.Fatal("Notify returned false with room in the queue")
	}
	if notify("4") {
		t.Error("Notify(4) returned true with a full queue")
	}
	if !logs.contains("dropping a Flux event") {
		t.Error("the dropped event was not logged")
	}

	r.release()
	flush(t, n)
	if !notify("4") {
		t.Error("Notify(4) returned false after the queue drained: the refused event was remembered")
	}
	flush(t, n)
	if got, want := r.messages(), []string{"db/pg: 1", "db/pg: 2", "db/pg: 3", "db/pg: 4"}; !reflect.DeepEqual(got, want) {
		t.Errorf("events arrived as %q, want %q", got, want)
	}
}

// TestNotifyRetriesBoundedAndLogs checks what happens when
// notification-controller answers 500: the recorder retries a bounded number
// of times, and the failure is logged, not returned to anyone.
func TestNotifyRetriesBoundedAndLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the recorder's back-off (about 3s)")
	}
	r := newReceiver(t, http.StatusInternalServerError)
	logs := &logSink{}
	n := newTestNotifier(t, r, logs.logger())
	if !n.Notify(context.Background(), stsKey("db", "pg"), fromKustomization("apps", testRevision), "error", "ResizeFailed", "boom") {
		t.Fatal("Notify returned false")
	}
	flush(t, n)
	if got, want := len(r.got()), 1+retryMax; got != want {
		t.Errorf("receiver got %d attempts, want %d", got, want)
	}
	if !logs.contains("unable to record event") {
		t.Errorf("the delivery failure was not logged; logs: %q", logs.all())
	}
}

// TestNotifyWithDiscardLogger guards against the recorder's use of
// log.GetSink(), which is nil for logr.Discard(): the send must not panic
// (a panic in the sending goroutine would end the test binary).
func TestNotifyWithDiscardLogger(t *testing.T) {
	for name, log := range map[string]logr.Logger{"Discard": logr.Discard(), "zero": {}} {
		t.Run(name, func(t *testing.T) {
			r := newReceiver(t, http.StatusAccepted)
			n := newTestNotifier(t, r, log)
			if !n.Notify(context.Background(), stsKey("db", "pg"), fromKustomization("apps", testRevision), "success", "R", "d") {
				t.Fatal("Notify returned false")
			}
			flush(t, n)
			if got := len(r.got()); got != 1 {
				t.Errorf("receiver got %d events, want 1", got)
			}
		})
	}
}

func TestNewNotifierRejectsBadConfiguration(t *testing.T) {
	for _, c := range []struct{ webhook, controller, wantErr string }{
		{"", "claimwarden", "is empty"},
		{"notification-controller.flux-system", "claimwarden", "not an http or https URL"},
		{"ftp://notification-controller/", "claimwarden", "not an http or https URL"},
		{"http://", "claimwarden", "names no host"},
		{"http://%zz/", "claimwarden", "is not a URL"},
		{"http://user:secret@notification-controller/", "claimwarden", "user name or password"},
		{"http://notification-controller.flux-system.svc.cluster.local./", "", "reporting controller"},
	} {
		_, err := NewNotifier(c.webhook, c.controller, logr.Discard())
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("NewNotifier(%q, %q) error = %v, want one containing %q", c.webhook, c.controller, err, c.wantErr)
		}
	}
	if _, err := NewNotifier("http://notification-controller.flux-system.svc.cluster.local./", "claimwarden", logr.Discard()); err != nil {
		t.Errorf("NewNotifier with Flux's default address: %v", err)
	}
}

// TestNotifyOmitsCommitForDigests: an OCI revision still produces the event
// (chat providers show it), but without the commit key, so that
// notification-controller's Git providers do not post to a commit that does
// not exist.
func TestNotifyOmitsCommitForDigests(t *testing.T) {
	r := newReceiver(t, http.StatusAccepted)
	n := newTestNotifier(t, r, logr.Discard())
	rev := "latest@sha256:c3ab8ff13720e8ad9047dd39466b3c8974e592c2fa383d4a3960714caef0c4f2"
	if !n.Notify(context.Background(), stsKey("db", "pg"), fromKustomization("apps", rev), "success", "R", "d") {
		t.Fatal("Notify returned false")
	}
	flush(t, n)
	got := r.got()
	if len(got) != 1 {
		t.Fatalf("receiver got %d events, want 1", len(got))
	}
	var ev struct{ Metadata map[string]string }
	if err := json.Unmarshal(got[0].body, &ev); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(ev.Metadata))
	for k := range ev.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if _, ok := ev.Metadata[MetaCommit]; ok || ev.Metadata[MetaRevision] != rev {
		t.Errorf("metadata keys %q, revision %q: want no %s and the revision as given", keys, ev.Metadata[MetaRevision], MetaCommit)
	}
	if !bytes.Contains(got[0].body, []byte(`"severity":"info"`)) {
		t.Errorf("unexpected body %s", got[0].body)
	}
}
