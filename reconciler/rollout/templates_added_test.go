package rollout_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// withLogs appends a second claim template, "logs", to a fixture's
// StatefulSet. Its Pod template is left as it is: the StatefulSet
// controller gives every Pod a volume per claim template, mounted or not,
// and a re-create with it adds a template without starting a rolling update.
func withLogs(sts *appsv1.StatefulSet) {
	logs := *sts.Spec.VolumeClaimTemplates[0].DeepCopy()
	logs.Name = "logs"
	sts.Spec.VolumeClaimTemplates = append(sts.Spec.VolumeClaimTemplates, logs)
}

// Issue 32, item 1: a StatefulSet of two claim templates, just created, is
// no template change, however its claims' creation interleaves with the
// controller's looks. The StatefulSet controller creates an ordinal's
// claims one after the other; a reconcile between them saw one template
// with claims and the other without, reported that one added and the
// shipped template-count denied it, until the claim appeared (9 of 15
// installs of a chart of two templates). Twenty such StatefulSets are
// created side by side; a watch sees every status their rollouts are given
// on the way to Ready, and none may mention a template added.
//
// Here the API server admits a claim within milliseconds, and a reconcile
// rarely falls between two; a webhook holds each claim of the namespace
// for claimAdmission first, as a policy engine's webhook or a busy etcd
// does on a real cluster, so that one falls between them for most
// StatefulSets (10 to 20 of the 20 before the fix).
func TestNewStatefulSetsOfTwoTemplatesAddNoTemplate(t *testing.T) {
	const n = 20
	c := started(t)
	ns := namespace(t, c)
	admitted := slowClaimAdmission(t, c, ns, claimAdmission)
	rw := watchRollouts(t, ns)
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("s%02d", i)
		sts := fixtures.StatefulSet(ns, names[i], 2, classExpandable, "1Gi")
		withLogs(sts)
		if err := c.Create(context.Background(), sts); err != nil {
			t.Fatal(err)
		}
	}
	rw.waitAll(t, "Ready with 4 compatible claims", names, func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Compatible == 4
	})
	added := rw.stopAndReport(t)
	// The denial's events are a second record of it.
	for _, e := range events(t, c, ns, v1alpha1.ReasonPolicyDenied) {
		if mentionsTemplateAdded(e.Note) && added[e.Regarding.Name] == "" {
			added[e.Regarding.Name] = "event: " + e.Note
		}
	}
	var reported []string
	for _, name := range names {
		if why := added[name]; why != "" {
			reported = append(reported, name)
			t.Logf("%s: %s", name, why)
		}
	}
	t.Logf("%d of %d new StatefulSets of two templates were reported with a template added", len(reported), n)
	if got := admitted.Load(); got < 4*n {
		t.Errorf("the webhook held %d claims, want all %d", got, 4*n)
	}
	if len(reported) > 0 {
		t.Errorf("new StatefulSets reported with a template added: %v", reported)
	}
}

// mentionsTemplateAdded reports whether a status text or event note says a
// template was added, or that template-count denied the StatefulSet.
func mentionsTemplateAdded(s string) bool {
	return strings.Contains(s, "templates added") || strings.Contains(s, "template-count")
}

// templateAddedIn returns what in a rollout's status says a template was
// added, or "".
func templateAddedIn(v *v1alpha1.VolumeClaimRollout) string {
	for _, p := range v.Status.Problems {
		if mentionsTemplateAdded(p) {
			return "problem: " + p
		}
	}
	for _, cond := range v.Status.Conditions {
		if cond.Reason == v1alpha1.ReasonTemplatesChanged || mentionsTemplateAdded(cond.Message) {
			return fmt.Sprintf("condition %s=%s %s: %s", cond.Type, cond.Status, cond.Reason, cond.Message)
		}
	}
	for _, cl := range v.Status.Claims {
		if mentionsTemplateAdded(cl.Message) {
			return "claim " + cl.Name + ": " + cl.Message
		}
	}
	return ""
}

// rolloutWatch follows the VolumeClaimRollouts of a namespace through a
// watch, which delivers every status written, and keeps each one's latest
// state and the first status that said a template was added.
type rolloutWatch struct {
	mu      sync.Mutex
	latest  map[string]*v1alpha1.VolumeClaimRollout
	added   map[string]string
	err     error
	stopped bool
	stop    func()
	done    chan struct{}
}

func watchRollouts(t *testing.T, ns string) *rolloutWatch {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: k8s.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// Opened before anything is created, so that it misses nothing.
	w, err := wc.Watch(ctx, &v1alpha1.VolumeClaimRolloutList{}, client.InNamespace(ns))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	rw := &rolloutWatch{latest: map[string]*v1alpha1.VolumeClaimRollout{}, added: map[string]string{}, done: make(chan struct{})}
	rw.stop = func() {
		rw.mu.Lock()
		rw.stopped = true
		rw.mu.Unlock()
		cancel()
		<-rw.done
	}
	t.Cleanup(rw.stop)
	go rw.run(ctx, wc, ns, w)
	return rw
}

// run consumes the watch; should the API server end it, it watches again
// from the last version seen, so that no status is missed.
func (rw *rolloutWatch) run(ctx context.Context, wc client.WithWatch, ns string, w watch.Interface) {
	defer close(rw.done)
	version := ""
	for {
		for ev := range w.ResultChan() {
			v, ok := ev.Object.(*v1alpha1.VolumeClaimRollout)
			if !ok {
				rw.fail(fmt.Errorf("watch error: %v", ev.Object))
				continue
			}
			version = v.ResourceVersion
			rw.see(ev.Type, v)
		}
		w.Stop()
		if ctx.Err() != nil {
			return
		}
		var err error
		w, err = wc.Watch(ctx, &v1alpha1.VolumeClaimRolloutList{}, client.InNamespace(ns),
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: version}})
		if err != nil {
			rw.fail(err)
			return
		}
	}
}

func (rw *rolloutWatch) see(typ watch.EventType, v *v1alpha1.VolumeClaimRollout) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if typ == watch.Deleted {
		delete(rw.latest, v.Name)
		return
	}
	rw.latest[v.Name] = v
	if why := templateAddedIn(v); why != "" && rw.added[v.Name] == "" {
		rw.added[v.Name] = why
	}
}

func (rw *rolloutWatch) fail(err error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if !rw.stopped && rw.err == nil {
		rw.err = err
	}
}

// waitAll waits until the latest status of every named rollout satisfies ok.
func (rw *rolloutWatch) waitAll(t *testing.T, what string, names []string, ok func(*v1alpha1.VolumeClaimRollout) bool) {
	t.Helper()
	var pending []string
	err := wait.PollUntilContextTimeout(context.Background(), fixtures.Poll, timeout, true, func(context.Context) (bool, error) {
		rw.mu.Lock()
		defer rw.mu.Unlock()
		if rw.err != nil {
			return false, rw.err
		}
		pending = pending[:0]
		for _, name := range names {
			if v := rw.latest[name]; v == nil || !ok(v) {
				pending = append(pending, name)
			}
		}
		return len(pending) == 0, nil
	})
	if err != nil {
		rw.mu.Lock()
		defer rw.mu.Unlock()
		var b strings.Builder
		for _, name := range pending {
			if v := rw.latest[name]; v != nil {
				fmt.Fprintf(&b, "\n%s: %s", name, describe(v))
			} else {
				fmt.Fprintf(&b, "\n%s: no rollout", name)
			}
		}
		t.Fatalf("rollouts never %s (%v); %d pending:%s", what, err, len(pending), b.String())
	}
}

// stopAndReport stops the watch and returns, by rollout, the first status
// that said a template was added.
func (rw *rolloutWatch) stopAndReport(t *testing.T) map[string]string {
	t.Helper()
	rw.stop()
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.err != nil {
		t.Fatal(rw.err)
	}
	out := make(map[string]string, len(rw.added))
	for k, v := range rw.added {
		out[k] = v
	}
	return out
}

// A template really added — the StatefulSet re-created by hand with a
// second template while its Pods and claims exist — is still reported and
// denied by template-count, for as long as a Pod lacks its claim. The
// StatefulSet controller creates the new template's claim for Pod 0, fails
// to give that Pod the volume (a Pod's volumes are immutable) and goes no
// further, under either Pod management policy: the other Pods run without
// their claims. (Before issue 32 the one claim created hid the template,
// and the rollout said for good that the controller would create the rest.)
func TestTemplateAddedByHandReCreateIsReported(t *testing.T) {
	for _, policy := range []appsv1.PodManagementPolicyType{appsv1.ParallelPodManagement, appsv1.OrderedReadyPodManagement} {
		t.Run(string(policy), func(t *testing.T) {
			c := started(t)
			ns := namespace(t, c)
			sts := fixtures.StatefulSet(ns, "web", 3, classExpandable, "1Gi")
			sts.Spec.PodManagementPolicy = policy
			createReady(t, c, sts)
			key := client.ObjectKeyFromObject(sts)

			if err := fixtures.ReplaceTemplates(context.Background(), c, key, withLogs); err != nil {
				t.Fatal(err)
			}
			vcr := waitRollout(t, c, key, "Stalled on the template added", func(v *v1alpha1.VolumeClaimRollout) bool {
				return conditions.IsStalled(v) && slices.Contains(v.Status.Problems, "templates added (not acted on): logs")
			})
			if msg := condition(vcr, "Stalled"); !strings.HasPrefix(msg, v1alpha1.ReasonPolicyDenied+": ") || !strings.Contains(msg, "template-count") {
				t.Errorf("Stalled %q, want PolicyDenied by template-count: %s", msg, describe(vcr))
			}
		})
	}
}

// claimAdmission is how long slowClaimAdmission holds a claim.
const claimAdmission = 300 * time.Millisecond

// slowClaimAdmission has the API server admit the claims created in ns only
// after delay, through a validating webhook served by the test, and returns
// how many it held. It returns once the webhook is in effect.
func slowClaimAdmission(t *testing.T, c client.Client, ns string, delay time.Duration) *atomic.Int32 {
	t.Helper()
	var held atomic.Int32
	probed := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
			return
		}
		// The latency simulated, not a wait for anything.
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		if ptr.Deref(review.Request.DryRun, false) {
			select {
			case probed <- struct{}{}:
			default:
			}
		} else {
			held.Add(1)
		}
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		review.Request = nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&review)
	}))
	srv.StartTLS()
	t.Cleanup(srv.Close)

	webhook := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-slow-claims"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "slow-claims.test.claimwarden.dev",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL:      ptr.To(srv.URL),
				CABundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
			},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"persistentvolumeclaims"},
				},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			// Every claim held, or none created: a claim admitted without the
			// delay would make the test pass for want of the race.
			FailurePolicy:  ptr.To(admissionregistrationv1.Fail),
			TimeoutSeconds: ptr.To(int32(10)),
		}},
	}
	ctx := context.Background()
	if err := c.Create(ctx, webhook); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), webhook) })

	// The API server reads webhook configurations from its cache: a dry-run
	// claim reaches the webhook once it is in effect.
	probe := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			},
		},
	}
	err := wait.PollUntilContextTimeout(ctx, fixtures.Poll, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Create(ctx, probe.DeepCopy(), client.DryRunAll); err != nil {
			return false, err
		}
		select {
		case <-probed:
			return true, nil
		default:
			return false, nil
		}
	})
	if err != nil {
		t.Fatalf("the claim-admission webhook never took effect: %v", err)
	}
	return &held
}
