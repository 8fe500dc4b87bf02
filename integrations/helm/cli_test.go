package helm

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// upgradeFailed is how Helm 3's `helm upgrade` records a refused StatefulSet patch.
const upgradeFailed = `Upgrade "web" failed: cannot patch "web" with kind StatefulSet: StatefulSet.apps "web" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden`

// otherStatefulSets are, besides the manifest's web, one the release does not
// own live and one helm-controller's post-renderer labelled.
const otherStatefulSets = `---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: stranger}
spec:
  serviceName: stranger
  selector: {matchLabels: {app: stranger}}
  template: {metadata: {labels: {app: stranger}}, spec: {containers: [{name: c, image: i}]}}
  volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 2Gi}}}}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: fluxed, labels: {helm.toolkit.fluxcd.io/name: web}}
spec:
  serviceName: fluxed
  selector: {matchLabels: {app: fluxed}}
  template: {metadata: {labels: {app: fluxed}}, spec: {containers: [{name: c, image: i}]}}
  volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 2Gi}}}}]
`

// cliRecord is version of release web in ns as `helm upgrade` stores it.
func cliRecord(t *testing.T, ns string, version int, status rcommon.Status, description string) *corev1.Secret {
	t.Helper()
	rel := release(version)
	rel.Namespace = ns
	rel.Manifest = manifest + otherStatefulSets
	rel.Info = &rspb.Info{Status: status, Description: description}
	rel.Chart = &chartv2.Chart{Metadata: &chartv2.Metadata{Name: "web", Version: "0.2.0"}}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: SecretName("web", version), Labels: map[string]string{
			"owner": "helm", "name": "web", "status": string(status), "version": strconv.Itoa(version)}},
		Type: "helm.sh/release.v1",
		Data: map[string][]byte{releaseKey: encode(t, rel)},
	}
}

func liveStatefulSet(ns, name string, annotations map[string]string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: appsv1.StatefulSetSpec{
			ServiceName: name,
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}},
		},
	}
}

// metadataOf reads a record as the watch holds it.
func metadataOf(t *testing.T, c client.Client, ns, name string) *metav1.PartialObjectMetadata {
	t.Helper()
	m := NewReleaseSecret()
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCLIReleases reads plain Helm release records on a real API server:
// only the newest version of a release is acted on, only when it failed on
// the claim templates, and only for StatefulSets the release owns.
func TestCLIReleases(t *testing.T) {
	c := kube(t)
	ctx := context.Background()
	ns := "ci"
	owned := map[string]string{annotationReleaseName: "web", annotationReleaseNamespace: ns}
	fluxed := liveStatefulSet(ns, "fluxed", owned)
	fluxed.Labels = map[string]string{HelmReleaseNameLabel: "web"}
	create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		liveStatefulSet(ns, "web", owned), liveStatefulSet(ns, "stranger", nil), fluxed,
		cliRecord(t, ns, 1, rcommon.StatusDeployed, "Install complete"),
		cliRecord(t, ns, 2, rcommon.StatusFailed, upgradeFailed))
	recorder := &eventsSeen{}
	tool := &CLIReleases{Cached: c, Reader: c, Recorder: outcome.Recorder{EventRecorder: recorder}}

	v1, v2 := metadataOf(t, c, ns, SecretName("web", 1)), metadataOf(t, c, ns, SecretName("web", 2))
	if r, err := tool.Read(ctx, v1); err != nil || r.State != source.Idle {
		t.Errorf("the deployed version 1: %+v, %v; want Idle", r, err)
	}
	r, err := tool.Read(ctx, v2)
	if err != nil || r.State != source.Blocked || r.Revision != "web.v2" || r.Key != string(v2.UID) {
		t.Fatalf("the failed newest version 2: %+v, %v; want Blocked at web.v2", r, err)
	}
	if rel := tool.Related(ctx, v2); len(rel) != 1 || rel[0].Name != SecretName("web", 1) {
		t.Errorf("related records of version 2: %v, want version 1's", rel)
	}

	d, err := tool.Desired(ctx, v2)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Candidates) != 3 || d.Chart != "web@0.2.0" || d.Repository != "" || d.Revision != "" {
		t.Fatalf("desired %+v: want the record's three StatefulSets, chart web@0.2.0, no commit", d)
	}
	// Which of them the release manages is the live objects' to say.
	var web *appsv1.StatefulSet
	for _, cand := range d.Candidates {
		var live appsv1.StatefulSet
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: cand.Name}, &live); err != nil {
			t.Fatal(err)
		}
		err := tool.Manages(ctx, v2, &live)
		want := map[string]string{"web": "", "stranger": "does not carry meta.helm.sh/release-name=web", "fluxed": "is Flux HelmRelease web's"}[cand.Name]
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: Manages = %v, want managed", cand.Name, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: Manages = %v, want a refusal saying %q", cand.Name, err, want)
		}
		if cand.Name == "web" {
			web = cand
		}
	}
	if web.Annotations[annotationReleaseName] != "web" || web.Annotations[annotationReleaseNamespace] != ns || web.Labels[labelManagedBy] != "Helm" {
		t.Errorf("the candidate lacks Helm's ownership metadata: %v %v", web.Annotations, web.Labels)
	}

	if err := tool.Nudge(ctx, source.Nudge{Converged: []types.NamespacedName{{Namespace: ns, Name: "web"}},
		Source: v1alpha1.Source{Kind: ReleaseSecretKind, Namespace: ns, Name: v2.Name, Chart: d.Chart}}); err != nil {
		t.Fatal(err)
	}
	if len(recorder.notes) != 1 || !strings.Contains(recorder.notes[0], "ci/web converged") || !strings.Contains(recorder.notes[0], "run the same `helm upgrade` again") {
		t.Errorf("events %q: want one asking for the next helm upgrade", recorder.notes)
	}

	t.Run("a newer version makes the failure idle", func(t *testing.T) {
		create(t, c, cliRecord(t, ns, 3, rcommon.StatusDeployed, "Rollback to 1"))
		if r, err := tool.Read(ctx, v2); err != nil || r.State != source.Idle {
			t.Errorf("version 2 after version 3: %+v, %v; want Idle", r, err)
		}
		if rel := tool.Related(ctx, metadataOf(t, c, ns, SecretName("web", 3))); len(rel) != 2 {
			t.Errorf("version 3's related records %v, want versions 1 and 2", rel)
		}
	})
	t.Run("a failure that is not the templates is left alone", func(t *testing.T) {
		create(t, c, cliRecord(t, ns, 4, rcommon.StatusFailed, `Upgrade "web" failed: context deadline exceeded`))
		d, err := tool.Desired(ctx, metadataOf(t, c, ns, SecretName("web", 4)))
		if err != nil || len(d.Candidates) != 0 || !strings.Contains(d.NothingToDo, "context deadline exceeded") {
			t.Errorf("got %+v, %v; want nothing to do, naming the failure", d, err)
		}
	})
	t.Run("a Secret that is no release record waits", func(t *testing.T) {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain", Labels: map[string]string{"owner": "helm", "name": "x", "version": "many"}}}
		create(t, c, s)
		if r, err := tool.Read(ctx, metadataOf(t, c, ns, "plain")); err != nil || r.State != source.Waiting {
			t.Errorf("got %+v, %v; want Waiting", r, err)
		}
	})
}

// eventsSeen records the notes of the events it is given.
type eventsSeen struct{ notes []string }

var _ events.EventRecorder = (*eventsSeen)(nil)

func (e *eventsSeen) Eventf(_, _ runtime.Object, _, _, _, note string, args ...any) {
	e.notes = append(e.notes, fmt.Sprintf(note, args...))
}
