package rollout_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/commitstatus"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// statusRecorder is the Git host behind the controller's commit-status sink
// (commitstatus' own tests post to real hosts): it keeps every status posted.
type statusRecorder struct {
	mu   sync.Mutex
	seen []recordedStatus
}

type recordedStatus struct {
	sha string
	s   commitstatus.Status
}

// Post implements commitstatus.Provider.
func (r *statusRecorder) Post(_ context.Context, _ githost.Repository, sha string, s commitstatus.Status) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, recordedStatus{sha: sha, s: s})
	return nil
}

// last returns the last status reported on sha for context, or false.
func (r *statusRecorder) last(sha, context string) (commitstatus.Status, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.seen) - 1; i >= 0; i-- {
		if r.seen[i].sha == sha && r.seen[i].s.Context == context {
			return r.seen[i].s, true
		}
	}
	return commitstatus.Status{}, false
}

// all returns every status posted in context, oldest first.
func (r *statusRecorder) all(context string) []recordedStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []recordedStatus
	for _, s := range r.seen {
		if s.s.Context == context {
			out = append(out, s)
		}
	}
	return out
}

func waitStatus(t *testing.T, sha, context string, ok func(commitstatus.Status) bool) commitstatus.Status {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s, found := statuses.last(sha, context)
		if found && ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("commit %s context %s: last status %+v (found %v), never the expected one", sha, context, s, found)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var shaCounter atomic.Int64

// gitProposal proposes sts with every template at size, as a Kustomization
// would; reapplied counts the Converged outcomes published for sts (what
// asks the GitOps tool to apply again).
func gitProposal(sts *appsv1.StatefulSet, size string, reapplied *atomic.Int32) (proposal.Proposal, string) {
	converged.count(client.ObjectKeyFromObject(sts), reapplied)
	desired := sts.DeepCopy()
	fixtures.SetTemplateSize(size)(desired)
	sha := fmt.Sprintf("%040x", shaCounter.Add(1)+int64(time.Now().UnixNano()))
	return proposal.Proposal{
		StatefulSet: desired,
		Source: v1alpha1.Source{
			Kind: "Kustomization", Namespace: "flux-system", Name: "apps",
			Repository: "https://git.example.com/org/apps.git", Revision: "main@sha1:" + sha,
		},
	}, sha
}

// createLive creates sts, waits until it is ready and returns it as the API server has it.
func createLive(t *testing.T, c client.Client, sts *appsv1.StatefulSet) (*appsv1.StatefulSet, client.ObjectKey) {
	t.Helper()
	createReady(t, c, sts)
	key := client.ObjectKeyFromObject(sts)
	live := &appsv1.StatefulSet{}
	if err := c.Get(context.Background(), key, live); err != nil {
		t.Fatal(err)
	}
	return live, key
}

func podUIDs(t *testing.T, c client.Client, ns string) map[string]types.UID {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]types.UID{}
	for _, p := range pods.Items {
		out[p.Name] = p.UID
	}
	return out
}

func TestAllowedProposalConvergesTheStatefulSetAndPatchesClaims(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "db", 2, classExpandable, "1Gi")
	live, key := createLive(t, c, sts)
	pods := podUIDs(t, c, ns)

	var reapplied atomic.Int32
	p, sha := gitProposal(live, "1536Mi", &reapplied)
	proposals.Set(context.Background(), p)

	vcr := waitRollout(t, c, key, "Ready at 1536Mi", func(v *v1alpha1.VolumeClaimRollout) bool {
		return readyTrue(v) && v.Status.Counts.Compatible == 2 && v.Status.Claims[0].To == "1536Mi"
	})
	if src := vcr.Status.Proposal.Source; src.Kind != "Kustomization" || src.Revision != p.Source.Revision {
		t.Errorf("recorded source %+v, want the Kustomization's revision", src)
	}
	if got := condition(vcr, v1alpha1.SourceReadyCondition); !strings.Contains(got, "Kustomization flux-system/apps") {
		t.Errorf("SourceReady: %s", got)
	}
	var now appsv1.StatefulSet
	if err := c.Get(context.Background(), key, &now); err != nil {
		t.Fatal(err)
	}
	if now.UID == live.UID {
		t.Error("the StatefulSet was not re-created")
	}
	if got := now.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]; got.String() != "1536Mi" {
		t.Errorf("live template requests %s, want 1536Mi", got.String())
	}
	for name, uid := range podUIDs(t, c, ns) {
		if pods[name] != uid {
			t.Errorf("Pod %s was replaced (uid %s → %s)", name, pods[name], uid)
		}
	}
	if n := reapplied.Load(); n != 1 {
		t.Errorf("the GitOps tool was asked to apply again %d times, want 1", n)
	}
	converged := events(t, c, ns, v1alpha1.ReasonConverged)
	if n := len(converged); n != 1 {
		t.Errorf("%d %s events, want 1", n, v1alpha1.ReasonConverged)
	}
	for _, e := range converged {
		// Flux's convention: the revision in the metadata, not only the text.
		if e.Annotations[outcome.AnnotationRevision] != p.Source.Revision || e.Annotations[outcome.AnnotationSource] != "Kustomization flux-system/apps" {
			t.Errorf("the %s event's annotations %v do not name revision %s of Kustomization flux-system/apps", e.Reason, e.Annotations, p.Source.Revision)
		}
		if e.Regarding.Kind != "StatefulSet" || e.Regarding.Name != "db" {
			t.Errorf("the %s event is about %s %s, want the StatefulSet", e.Reason, e.Regarding.Kind, e.Regarding.Name)
		}
	}
	waitStatus(t, sha, "claimwarden/"+ns+"/db", func(s commitstatus.Status) bool { return s.State == commitstatus.Success })
}

func TestDeniedProposalLeavesTheStatefulSetAndClaims(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "db", 2, classExpandable, "1Gi")
	live, key := createLive(t, c, sts)

	var reapplied atomic.Int32
	p, sha := gitProposal(live, "4Gi", &reapplied) // +300%
	proposals.Set(context.Background(), p)

	vcr := waitRollout(t, c, key, "denied", func(v *v1alpha1.VolumeClaimRollout) bool {
		return stalled(v) && v.Status.Counts.Denied == 2
	})
	if !strings.Contains(describe(vcr), "max-step") {
		t.Errorf("rollout %s does not name max-step", describe(vcr))
	}
	s := waitStatus(t, sha, "claimwarden/"+ns+"/db", func(s commitstatus.Status) bool { return s.State == commitstatus.Failure })
	if !strings.Contains(s.Description, "max-step") {
		t.Errorf("failure status %q does not name max-step", s.Description)
	}
	var now appsv1.StatefulSet
	if err := c.Get(context.Background(), key, &now); err != nil {
		t.Fatal(err)
	}
	if now.UID != live.UID {
		t.Error("a denied proposal re-created the StatefulSet")
	}
	for _, name := range []string{"data-db-0", "data-db-1"} {
		if r := request(claim(t, c, ns, name)); r.String() != "1Gi" {
			t.Errorf("%s patched to %s despite the denial", name, r.String())
		}
	}
	if n := reapplied.Load(); n != 0 {
		t.Errorf("the GitOps tool was asked to apply %d times after a denial", n)
	}
}

func TestNewerProposalSupersedesAnUnfinishedOne(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "db", 1, classExpandable, "1Gi")
	// OnClaimDelete keeps the first rollout unfinished (pending) on purpose.
	sts.Annotations = map[string]string{v1alpha1.UpdateStrategyAnnotation: string(v1alpha1.OnClaimDelete)}
	live, _ := createLive(t, c, sts)
	ctxName := "claimwarden/" + ns + "/db"

	var reapplied atomic.Int32
	first, firstSHA := gitProposal(live, "1536Mi", &reapplied)
	proposals.Set(context.Background(), first)
	waitStatus(t, firstSHA, ctxName, func(s commitstatus.Status) bool { return s.State == commitstatus.Pending })

	second, secondSHA := gitProposal(live, "1792Mi", &reapplied)
	proposals.Set(context.Background(), second)
	s := waitStatus(t, firstSHA, ctxName, func(s commitstatus.Status) bool { return s.State == commitstatus.Error })
	if !strings.Contains(s.Description, "superseded by "+secondSHA[:12]) {
		t.Errorf("first commit's final status %q does not say it was superseded by %s", s.Description, secondSHA[:12])
	}
	waitStatus(t, secondSHA, ctxName, func(s commitstatus.Status) bool { return s.State == commitstatus.Pending })
	// Events are sent asynchronously, after the commit status may be posted.
	if n := len(waitEvents(t, c, ns, v1alpha1.ReasonSuperseded, 1)); n != 1 {
		t.Errorf("%d %s events, want 1", n, v1alpha1.ReasonSuperseded)
	}
}

func TestUnreadableSourceIsReportedOnTheRollout(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	sts := fixtures.StatefulSet(ns, "db", 1, classExpandable, "1Gi")
	live, key := createLive(t, c, sts)
	var reapplied atomic.Int32
	p, _ := gitProposal(live, "1Gi", &reapplied) // the templates as they are: nothing to converge
	p.SourceError = "fetching artifact http://source-controller/gitrepository/apps.tar.gz: 404 Not Found"
	proposals.Set(context.Background(), p)

	vcr := waitRollout(t, c, key, "SourceReady=False", func(v *v1alpha1.VolumeClaimRollout) bool {
		return strings.Contains(condition(v, v1alpha1.SourceReadyCondition), v1alpha1.ReasonSourceUnavailable)
	})
	if got := condition(vcr, v1alpha1.SourceReadyCondition); !strings.Contains(got, "404 Not Found") {
		t.Errorf("SourceReady: %s, want the fetch error", got)
	}
	if !readyTrue(vcr) {
		t.Errorf("an unreadable source made a compatible rollout not Ready: %s", describe(vcr))
	}

	p.SourceError = ""
	proposals.Set(context.Background(), p)
	waitRollout(t, c, key, "SourceReady=True", func(v *v1alpha1.VolumeClaimRollout) bool {
		return strings.Contains(condition(v, v1alpha1.SourceReadyCondition), v1alpha1.ReasonSourceRead)
	})
}

// The re-create itself is a question to the policies: an organisation can
// refuse it (here: during a freeze) while allowing the claims' growth.
func TestPolicyCanRefuseTheRecreate(t *testing.T) {
	c := started(t)
	ns := namespace(t, c)
	labelNamespace(t, c, ns, "claimwarden.test/freeze", "true")
	sts := fixtures.StatefulSet(ns, "db", 1, classExpandable, "1Gi")
	live, key := createLive(t, c, sts)
	writePolicy(t, "freeze_recreate.rego", `package claimwarden.claims

deny contains {"policy": "recreate-freeze", "msg": "no StatefulSet is re-created during the freeze"} if {
	input.change.kind == "statefulset"
	input.change.recreate
	input.namespace.metadata.labels["claimwarden.test/freeze"] == "true"
}
`)
	var reapplied atomic.Int32
	p, sha := gitProposal(live, "1536Mi", &reapplied)
	proposals.Set(context.Background(), p)

	vcr := waitRollout(t, c, key, "stalled by the freeze", stalled)
	if !strings.Contains(describe(vcr), "recreate-freeze") {
		t.Errorf("rollout %s does not name the policy", describe(vcr))
	}
	waitStatus(t, sha, "claimwarden/"+ns+"/db", func(s commitstatus.Status) bool { return s.State == commitstatus.Failure })
	now := &appsv1.StatefulSet{}
	if err := c.Get(context.Background(), key, now); err != nil {
		t.Fatal(err)
	}
	if now.UID != live.UID || reapplied.Load() != 0 {
		t.Errorf("re-created (uid %s → %s) or re-applied (%d) despite the denial", live.UID, now.UID, reapplied.Load())
	}
	if r := request(claim(t, c, ns, "data-db-0")); r.String() != "1Gi" {
		t.Errorf("claim patched to %s before the StatefulSet carried the template", r.String())
	}
}
