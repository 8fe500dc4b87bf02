package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/converge"
	"github.com/claimwarden/claimwarden/test/fluxenv"
	"github.com/claimwarden/claimwarden/test/gitea"
)

// fluxStatefulSet is the manifest each scenario keeps in Git; the
// Kustomization's targetNamespace puts it into the scenario's namespace.
// RollingUpdate, the default: under OnDelete claimwarden waits for the
// Pods to be deleted, as KEP-4650 does (reconciler/rollout's OnDelete test).
const fluxStatefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: web
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.example/web:1
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: sim
      resources:
        requests:
          storage: %s
`

const fluxKustomizationFile = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- statefulset.yaml
`

// fluxLabelledKustomizationFile also puts a label into the claim template:
// a build label claimwarden must not copy onto PVCs. Only there, not into
// the Pod template, whose change would make the StatefulSet controller
// restart the Pods the tests watch.
const fluxLabelledKustomizationFile = fluxKustomizationFile + `labels:
- pairs: {team: storage}
  fields:
  - kind: StatefulSet
    path: spec/volumeClaimTemplates[]/metadata/labels
    create: true
`

// fluxScenario is one repository, Kustomization and namespace.
type fluxScenario struct {
	t    *testing.T
	cl   *cluster
	g    *gitea.Server
	ctl  *controller
	repo string
	ns   string
	ks   types.NamespacedName
	sts  types.NamespacedName
}

// push pushes the StatefulSet at size, with the kustomization file given
// (fluxKustomizationFile when empty).
func (s *fluxScenario) push(size, kustomization, message string) string {
	s.t.Helper()
	if kustomization == "" {
		kustomization = fluxKustomizationFile
	}
	sha, err := s.g.PushCommit(context.Background(), s.repo, map[string]string{
		"statefulset.yaml":   fmt.Sprintf(fluxStatefulSet, size),
		"kustomization.yaml": kustomization,
	}, message)
	if err != nil {
		s.t.Fatal(err)
	}
	return sha
}

// commit pushes the StatefulSet at size and makes Flux fetch it at once.
func (s *fluxScenario) commit(size, kustomization, message string) string {
	s.t.Helper()
	sha := s.push(size, kustomization, message)
	repo := fluxenv.GitRepository(s.ks.Namespace, s.ks.Name, "", 0)
	if _, err := fluxenv.RequestReconcile(context.Background(), s.cl.admin, repo); err != nil {
		s.t.Fatal(err)
	}
	return sha
}

// kustomization waits until the Kustomization has attempted sha and cond holds.
func (s *fluxScenario) kustomization(sha, what string, cond func(*kustomizev1.Kustomization) bool) *kustomizev1.Kustomization {
	s.t.Helper()
	ks := &kustomizev1.Kustomization{}
	waitFor(s.t, fmt.Sprintf("Kustomization %s at %s: %s", s.ks, sha[:8], what), []*controller{s.ctl}, func(ctx context.Context) (bool, error) {
		if err := s.cl.admin.Get(ctx, s.ks, ks); err != nil {
			return false, err
		}
		return ks.Status.LastAttemptedRevision == "main@sha1:"+sha && cond(ks), nil
	})
	return ks
}

func ready(ks *kustomizev1.Kustomization) bool {
	ok, _, _ := fluxenv.Ready(ks)
	return ok
}

// setupFluxScenario creates a Gitea repository holding the StatefulSet at
// 1Gi, a GitRepository and a Kustomization for it, and waits until Flux
// applied it and its Pods and claims are ready.
func setupFluxScenario(t *testing.T, cl *cluster, g *gitea.Server, ctl *controller, name string) (*fluxScenario, map[string]types.UID) {
	ctx := context.Background()
	url, err := g.CreateRepo(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	s := &fluxScenario{t: t, cl: cl, g: g, ctl: ctl, repo: name, ns: namespace(t, cl.admin),
		ks: types.NamespacedName{Namespace: "flux-system", Name: name}}
	s.sts = types.NamespacedName{Namespace: s.ns, Name: "web"}
	first := s.push("1Gi", "", "web at 1Gi")
	if err := cl.admin.Create(ctx, fluxenv.GitRepository(s.ks.Namespace, name, url, time.Minute)); err != nil {
		t.Fatal(err)
	}
	ks := fluxenv.Kustomization(s.ks.Namespace, name, name, "./")
	ks.Spec.TargetNamespace = s.ns
	if err := cl.admin.Create(ctx, ks); err != nil {
		t.Fatal(err)
	}
	s.kustomization(first, "Ready", ready)
	sts := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, s.sts, sts); err != nil {
		t.Fatal(err)
	}
	waitRolloutDone(t, cl.admin, s.sts, 2, "1Gi", ctl)
	return s, podUIDs(t, cl.admin, sts)
}

// The GitOps loop with the real source-controller and kustomize-controller,
// Git on a real Gitea and the binary as its ServiceAccount: (a) an allowed
// bump converges the StatefulSet, grows the claims without restarting Pods
// and turns Flux Ready, with success on the commit; (b) a +300% bump is
// denied: claims untouched, Flux still failing, failure naming max-step on
// the commit; (c) a revert shrinks nothing and says why on its commit.
func TestFluxLoop(t *testing.T) {
	cl := started(t)
	ctx := context.Background()
	startFlux(t)
	g := startGitea(t)
	ctl := startController(t, cl, "flux", "--flux", "--flux-artifact-cache-dir", t.TempDir(),
		"--config", giteaConfig(t, cl, g.URL, g.Token, "gitea-token"))

	t.Run("allowed", func(t *testing.T) {
		t.Parallel()
		s, pods := setupFluxScenario(t, cl, g, ctl, "allowed")
		before := &appsv1.StatefulSet{}
		if err := cl.admin.Get(ctx, s.sts, before); err != nil {
			t.Fatal(err)
		}
		sha := s.commit("2Gi", fluxLabelledKustomizationFile, "web at 2Gi (+100%), labelled team=storage")
		began := time.Now()
		s.kustomization(sha, "Ready after claimwarden converged", func(ks *kustomizev1.Kustomization) bool {
			return ready(ks) && ks.Status.LastAppliedRevision == "main@sha1:"+sha
		})
		t.Logf("commit %s applied by Flux %v after the push", sha[:8], time.Since(began).Round(time.Millisecond))
		vcr := waitRolloutDone(t, cl.admin, s.sts, 2, "2Gi", ctl)
		if src := vcr.Status.Proposal.Source; src.Kind != "Kustomization" || src.Name != s.ks.Name || !strings.HasSuffix(src.Revision, sha) {
			t.Errorf("rollout source %+v, want the Kustomization at %s", src, sha)
		}
		if got := vcr.Status.Proposal.IgnoredLabels; len(got) != 1 || got[0] != "team" {
			t.Errorf("ignored template labels %v, want [team]", got)
		}
		for _, name := range claimNames("web", 2) {
			pvc := claim(t, cl.admin, s.ns, name)
			if request(pvc) != "2Gi" || capacity(pvc) != "2Gi" {
				t.Errorf("%s: request %s capacity %s, want 2Gi", name, request(pvc), capacity(pvc))
			}
			if _, leaked := pvc.Labels["team"]; leaked {
				t.Errorf("%s: the kustomize label team was copied onto the claim: %v", name, pvc.Labels)
			}
		}
		after := &appsv1.StatefulSet{}
		if err := cl.admin.Get(ctx, s.sts, after); err != nil {
			t.Fatal(err)
		}
		if got := after.Spec.VolumeClaimTemplates[0].Labels["team"]; got != "storage" {
			t.Errorf("live claim template labels %v, want team=storage as in Git", after.Spec.VolumeClaimTemplates[0].Labels)
		}
		if after.UID == before.UID {
			t.Error("the StatefulSet was not converged (same UID)")
		}
		assertPodsKept(t, cl.admin, after, pods)
		waitStatus(t, g, s.repo, sha, "claimwarden/"+s.ns+"/web", "success", "2/2 claims compatible", ctl)
		if n := ctl.counter(t, `claimwarden_convergences_total{cluster="in-cluster",result="converged",source="Kustomization"}`); n < 1 {
			t.Errorf("claimwarden_convergences_total for Kustomizations = %d, want at least this one", n)
		}
	})

	t.Run("denied", func(t *testing.T) {
		t.Parallel()
		s, pods := setupFluxScenario(t, cl, g, ctl, "denied")
		before := &appsv1.StatefulSet{}
		if err := cl.admin.Get(ctx, s.sts, before); err != nil {
			t.Fatal(err)
		}
		sha := s.commit("4Gi", "", "web at 4Gi (+300%)")
		desc := waitStatus(t, g, s.repo, sha, "claimwarden/"+s.ns+"/web", "failure", "max-step", ctl)
		if !strings.Contains(desc, "data-web-") {
			t.Errorf("failure %q does not name the claim", desc)
		}
		s.kustomization(sha, "still failing on the immutable templates", func(ks *kustomizev1.Kustomization) bool {
			ok, _, msg := fluxenv.Ready(ks)
			return !ok && converge.IsTemplatesImmutableMessage(msg) && ks.Status.LastAppliedRevision != "main@sha1:"+sha
		})
		assertUntouched(t, cl, s.sts, before, pods, "1Gi")

		// Git takes the denied change back: Flux applies, and the denied
		// proposal is gone — the rollout is Ready on the live templates.
		back := s.commit("1Gi", "", `Revert "web at 4Gi (+300%)"`)
		s.kustomization(back, "Ready", func(ks *kustomizev1.Kustomization) bool {
			return ready(ks) && ks.Status.LastAppliedRevision == "main@sha1:"+back
		})
		waitFor(t, "the denied proposal dropped: rollout Ready again", []*controller{ctl}, func(ctx context.Context) (bool, error) {
			vcr := &v1alpha1.VolumeClaimRollout{}
			if err := cl.admin.Get(ctx, s.sts, vcr); err != nil {
				return false, err
			}
			return vcr.Status.Counts.Compatible == 2 && !strings.Contains(describe(vcr), v1alpha1.ReasonPolicyDenied), nil
		})
	})

	t.Run("suspended", func(t *testing.T) {
		t.Parallel()
		testFluxSuspended(t, cl, g, ctl)
	})

	t.Run("revert", func(t *testing.T) {
		t.Parallel()
		s, _ := setupFluxScenario(t, cl, g, ctl, "revert")
		bumped := s.commit("2Gi", "", "web at 2Gi")
		s.kustomization(bumped, "Ready", func(ks *kustomizev1.Kustomization) bool {
			return ready(ks) && ks.Status.LastAppliedRevision == "main@sha1:"+bumped
		})
		waitRolloutDone(t, cl.admin, s.sts, 2, "2Gi", ctl)
		before := &appsv1.StatefulSet{}
		if err := cl.admin.Get(ctx, s.sts, before); err != nil {
			t.Fatal(err)
		}
		pods := podUIDs(t, cl.admin, before)
		revert := s.commit("1Gi", "", `Revert "web at 2Gi"`)
		waitStatus(t, g, s.repo, revert, "claimwarden/"+s.ns+"/web", "failure", "increase-only", ctl)
		assertUntouched(t, cl, s.sts, before, pods, "2Gi")
	})
}

// A suspended Kustomization is left alone, and said so; once resumed, the
// revision it could not apply is converged like any other.
func testFluxSuspended(t *testing.T, cl *cluster, g *gitea.Server, ctl *controller) {
	ctx := context.Background()
	s, pods := setupFluxScenario(t, cl, g, ctl, "suspended")
	ks := &kustomizev1.Kustomization{}
	if err := cl.admin.Get(ctx, s.ks, ks); err != nil {
		t.Fatal(err)
	}
	suspend := func(v bool) {
		t.Helper()
		base := ks.DeepCopy()
		ks.Spec.Suspend = v
		if err := cl.admin.Patch(ctx, ks, client.MergeFrom(base)); err != nil {
			t.Fatal(err)
		}
	}
	suspend(true)
	waitFor(t, "an event saying the suspended Kustomization is left alone", []*controller{ctl}, func(ctx context.Context) (bool, error) {
		var list eventsv1.EventList
		if err := cl.admin.List(ctx, &list, client.InNamespace(s.ks.Namespace)); err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.Regarding.Name == s.ks.Name && e.Reason == "ClaimwardenSuspended" {
				return true, nil
			}
		}
		return false, nil
	})
	before := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, s.sts, before); err != nil {
		t.Fatal(err)
	}
	sha := s.commit("2Gi", "", "web at 2Gi while suspended")
	repo := &sourcev1.GitRepository{}
	waitFor(t, "source-controller fetched "+sha[:8], []*controller{ctl}, func(ctx context.Context) (bool, error) {
		if err := cl.admin.Get(ctx, s.ks, repo); err != nil {
			return false, err
		}
		return repo.Status.Artifact != nil && strings.HasSuffix(repo.Status.Artifact.Revision, sha), nil
	})
	now := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, s.sts, now); err != nil {
		t.Fatal(err)
	}
	if now.UID != before.UID {
		t.Fatal("claimwarden converged the StatefulSet of a suspended Kustomization")
	}

	suspend(false)
	s.kustomization(sha, "Ready once resumed", func(ks *kustomizev1.Kustomization) bool {
		return ready(ks) && ks.Status.LastAppliedRevision == "main@sha1:"+sha
	})
	waitRolloutDone(t, cl.admin, s.sts, 2, "2Gi", ctl)
	if err := cl.admin.Get(ctx, s.sts, now); err != nil {
		t.Fatal(err)
	}
	assertPodsKept(t, cl.admin, now, pods)
}

// assertUntouched checks that the StatefulSet, its Pods and claims are as they were.
func assertUntouched(t *testing.T, cl *cluster, key types.NamespacedName, before *appsv1.StatefulSet, pods map[string]types.UID, size string) {
	t.Helper()
	now := &appsv1.StatefulSet{}
	if err := cl.admin.Get(context.Background(), key, now); err != nil {
		t.Fatal(err)
	}
	if now.UID != before.UID {
		t.Error("a denied change re-created the StatefulSet")
	}
	assertPodsKept(t, cl.admin, now, pods)
	for _, name := range claimNames("web", 2) {
		if got := request(claim(t, cl.admin, key.Namespace, name)); got != size {
			t.Errorf("%s: request %s, want %s untouched", name, got, size)
		}
	}
	vcr := &v1alpha1.VolumeClaimRollout{}
	if err := cl.admin.Get(context.Background(), key, vcr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(describe(vcr), v1alpha1.ReasonPolicyDenied) {
		t.Errorf("rollout not stalled by a policy: %s", describe(vcr))
	}
}

// startFlux starts source-controller and kustomize-controller once per test
// binary; they run until it exits. They leave the objects of other shards
// (startTenantFlux's) alone.
func startFlux(t *testing.T) {
	t.Helper()
	sharedFlux.start(t)
}

var sharedFlux = &onceFlux{options: func() fluxenv.Options {
	return fluxenv.Options{Dir: filepath.Join(env.Dir, "flux"), WatchLabelSelector: "!" + fluxenv.ShardLabel}
}}

// onceFlux is a Flux instance started on first use, once per test binary.
type onceFlux struct {
	options func() fluxenv.Options // called once env is up
	once    sync.Once
	err     error
}

func (f *onceFlux) start(t *testing.T) {
	t.Helper()
	f.once.Do(func() { _, f.err = fluxenv.Start(context.Background(), env, f.options()) })
	if f.err != nil {
		t.Fatal(f.err)
	}
}
