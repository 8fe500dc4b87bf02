package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/fluxenv"
)

// tenancy is the layout of a tenancy test: a platform namespace holding
// the victim StatefulSet, and two tenants; tenant A attacks, tenant B is
// a bystander whose StatefulSet of the victim's name must stay as it is too.
type tenancy struct {
	platform, tenantA, tenantB string
}

// victim is the name of the StatefulSet of the platform (and of tenant B)
// a tenant tries to make claimwarden re-create.
const victim = "db"

// newTenancy creates the three namespaces, named after the test.
func newTenancy(t *testing.T, c client.Client) tenancy {
	t.Helper()
	suffix := strings.ToLower(strings.TrimPrefix(t.Name(), "TestTenancy"))
	l := tenancy{platform: "platform-" + suffix, tenantA: "tenant-a-" + suffix, tenantB: "tenant-b-" + suffix}
	for _, ns := range []string{l.platform, l.tenantA, l.tenantB} {
		if err := fixtures.Namespace(context.Background(), c, ns); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// createVictims creates the StatefulSet victim in the platform's and
// tenant B's namespaces as the administrator, each with mutate applied
// (the metadata a GitOps tool would have put there), and waits until their
// Pods are ready and claimwarden's rollouts are Ready at 1Gi.
func (l tenancy) createVictims(t *testing.T, cl *cluster, ctl *controller, mutate func(*appsv1.StatefulSet)) {
	t.Helper()
	for _, ns := range []string{l.platform, l.tenantB} {
		sts := fixtures.StatefulSet(ns, victim, 2, class, "1Gi")
		if mutate != nil {
			mutate(sts)
		}
		createReady(t, cl.admin, sts)
		waitRolloutDone(t, cl.admin, client.ObjectKeyFromObject(sts), 2, "1Gi", ctl)
	}
}

// victimManifest is the victim, in namespace ns (none when empty), with
// claims of size: what a tenant's build or release record names.
func victimManifest(t *testing.T, ns, size string) string {
	t.Helper()
	return statefulSetManifest(t, ns, victim, size)
}

// statefulSetManifest is fixtures.StatefulSet as a manifest in Git or a
// release record holds it.
func statefulSetManifest(t *testing.T, ns, name, size string) string {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(fixtures.StatefulSet(ns, name, 2, class, size))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion("apps/v1")
	u.SetKind("StatefulSet")
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	out, err := yaml.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// tenantClient is a client acting as user, a tenant's person: the API
// server authorises its requests with the tenant's rights only.
func tenantClient(t *testing.T, user string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// grant creates a Role of rules in ns and binds it to subject.
func grant(t *testing.T, c client.Client, ns, name string, subject rbacv1.Subject, rules ...rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}); err != nil {
		t.Fatal(err)
	}
	bind(t, c, ns, name, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}, subject)
}

// bind creates a RoleBinding of role to subject in ns.
func bind(t *testing.T, c client.Client, ns, name string, role rbacv1.RoleRef, subject rbacv1.Subject) {
	t.Helper()
	if err := c.Create(context.Background(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    role,
		Subjects:   []rbacv1.Subject{subject},
	}); err != nil {
		t.Fatal(err)
	}
}

// waitToolEvent waits for an event of reason regarding the object kind
// ns/name whose note contains every one of want, and returns it.
func waitToolEvent(t *testing.T, c client.Client, ctl *controller, kind, ns, name, reason string, want ...string) eventsv1.Event {
	t.Helper()
	var found eventsv1.Event
	waitFor(t, fmt.Sprintf("a %s event on %s %s/%s saying %q", reason, kind, ns, name, want), []*controller{ctl}, func(ctx context.Context) (bool, error) {
		evs, err := eventsRegarding(ctx, c, kind, ns, name)
		if err != nil {
			return false, err
		}
		var seen []string
		for _, e := range evs {
			seen = append(seen, e.Reason+": "+e.Note)
			if e.Reason != reason {
				continue
			}
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(e.Note, w)
			}
			if ok {
				found = e
				return true, nil
			}
		}
		return false, fmt.Errorf("events: %q", seen)
	})
	return found
}

// eventsRegarding lists the events (events.k8s.io) regarding kind ns/name.
func eventsRegarding(ctx context.Context, c client.Client, kind, ns, name string) ([]eventsv1.Event, error) {
	var list eventsv1.EventList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name {
			out = append(out, e)
		}
	}
	return out, nil
}

// watcher remembers what the namespaces a tenant must not reach held at
// the start: every StatefulSet's UID and generation, every claim's request
// and resourceVersion.
type watcher struct {
	c          client.Client
	namespaces []string
	sets       map[types.NamespacedName]appsv1.StatefulSet
	claims     map[types.NamespacedName]corev1.PersistentVolumeClaim
}

// watch records the namespaces' StatefulSets and claims now.
func watch(t *testing.T, c client.Client, namespaces ...string) *watcher {
	t.Helper()
	w := &watcher{c: c, namespaces: namespaces, sets: map[types.NamespacedName]appsv1.StatefulSet{}, claims: map[types.NamespacedName]corev1.PersistentVolumeClaim{}}
	for _, ns := range namespaces {
		stss, pvcs := w.list(t, ns)
		for _, s := range stss {
			w.sets[client.ObjectKeyFromObject(&s)] = s
		}
		for _, p := range pvcs {
			w.claims[client.ObjectKeyFromObject(&p)] = p
		}
	}
	if len(w.sets) == 0 || len(w.claims) == 0 {
		t.Fatalf("nothing to watch in %v: %d StatefulSets, %d claims", namespaces, len(w.sets), len(w.claims))
	}
	return w
}

func (w *watcher) list(t *testing.T, ns string) ([]appsv1.StatefulSet, []corev1.PersistentVolumeClaim) {
	t.Helper()
	ctx := context.Background()
	var stss appsv1.StatefulSetList
	if err := w.c.List(ctx, &stss, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var pvcs corev1.PersistentVolumeClaimList
	if err := w.c.List(ctx, &pvcs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return stss.Items, pvcs.Items
}

// assertClean fails the test for every write claimwarden could have made
// in the watched namespaces: a StatefulSet re-created (another UID) or its
// spec changed (another generation), one gone or new, a claim whose
// request or resourceVersion changed, a ClaimPatched event, and a rollout
// working towards another namespace's proposal without being stalled
// NotAuthorized.
func (w *watcher) assertClean(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range w.namespaces {
		stss, pvcs := w.list(t, ns)
		seen := map[types.NamespacedName]bool{}
		for _, s := range stss {
			key := client.ObjectKeyFromObject(&s)
			seen[key] = true
			was, ok := w.sets[key]
			switch {
			case !ok:
				t.Errorf("StatefulSet %s appeared", key)
			case s.UID != was.UID:
				t.Errorf("StatefulSet %s was re-created: UID %s, was %s (created %s)", key, s.UID, was.UID, s.CreationTimestamp)
			case s.Generation != was.Generation:
				t.Errorf("StatefulSet %s: spec written, generation %d, was %d", key, s.Generation, was.Generation)
			}
		}
		for _, p := range pvcs {
			key := client.ObjectKeyFromObject(&p)
			seen[key] = true
			was, ok := w.claims[key]
			switch {
			case !ok:
				t.Errorf("claim %s appeared", key)
			case request(&p) != request(&was):
				t.Errorf("claim %s: request %s, was %s (managers: %s)", key, request(&p), request(&was), managers(&p))
			case p.ResourceVersion != was.ResourceVersion:
				t.Errorf("claim %s written: resourceVersion %s, was %s (managers: %s)", key, p.ResourceVersion, was.ResourceVersion, managers(&p))
			}
		}
		for key := range w.sets {
			if key.Namespace == ns && !seen[key] {
				t.Errorf("StatefulSet %s is gone", key)
			}
		}
		for key := range w.claims {
			if key.Namespace == ns && !seen[key] {
				t.Errorf("claim %s is gone", key)
			}
		}
		evs, err := patchEvents(ctx, w.c, ns)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			t.Errorf("%s event in %s: %s", patchedReason, ns, e.Note)
		}
		var vcrs v1alpha1.VolumeClaimRolloutList
		if err := w.c.List(ctx, &vcrs, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, v := range vcrs.Items {
			p := v.Status.Proposal
			if p == nil || p.Source.Kind == "" || p.Source.Namespace == ns {
				continue
			}
			if !strings.Contains(describe(&v), v1alpha1.ReasonNotAuthorized) {
				t.Errorf("rollout %s/%s works towards %s %s/%s's proposal and is not stalled %s: %s",
					ns, v.Name, p.Source.Kind, p.Source.Namespace, p.Source.Name, v1alpha1.ReasonNotAuthorized, describe(&v))
			}
		}
	}
}

// tenantShard is the Flux shard of the tenancy tests: its kustomize- and
// helm-controller are locked down as Flux's multi-tenancy guide says.
const tenantShard = "tenants"

// startTenantFlux starts, once per test binary, a Flux instance locked down
// for multi-tenancy (--no-cross-namespace-refs, --default-service-account
// default) that reconciles the objects labelled with its shard only, next
// to startFlux's, which leaves them alone.
func startTenantFlux(t *testing.T) {
	t.Helper()
	tenantFlux.start(t)
}

var tenantFlux = &onceFlux{options: func() fluxenv.Options {
	lockdown := []string{"--no-cross-namespace-refs=true", "--default-service-account=default"}
	return fluxenv.Options{
		Namespace: "flux-tenants", Dir: filepath.Join(env.Dir, "flux-tenants"),
		WatchLabelSelector: fluxenv.ShardLabel + "=" + tenantShard,
		KustomizeArgs:      lockdown, HelmArgs: lockdown,
	}
}}

// tenantFluxFlags are claimwarden's mirror of startTenantFlux's lockdown.
var tenantFluxFlags = []string{"--flux", "--flux-default-service-account", "default", "--flux-no-cross-namespace-refs"}

// inShard labels obj for startTenantFlux's controllers.
func inShard(obj client.Object) client.Object {
	l := obj.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[fluxenv.ShardLabel] = tenantShard
	obj.SetLabels(l)
	return obj
}
