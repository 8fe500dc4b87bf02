package autoresize

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// A StatefulSet annotated for autoresize in a namespace the operator has
// not opted in says why nothing happens: its status, and one Warning event
// however many checks find the same. One without a VolumeClaimRollout gets
// none created; one not annotated is not spoken of. On a real API server
// with claimwarden's CRDs.
func TestNotOptedInIsSaidOnce(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{CRDDirs: []string{filepath.Join("..", "..", "config", "crd", "bases")}})
	c := testenv.Client(t, env.Config, v1alpha1.AddToScheme)
	ctx := context.Background()
	sts := func(name string, annotations map[string]string) *appsv1.StatefulSet {
		labels := map[string]string{"app": name}
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "billing", Name: name, Annotations: annotations},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(0)), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "db"}}}}}}
	}
	optedIn := map[string]string{v1alpha1.AutoresizeAnnotation: "true"}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "billing"}},
		sts("db", optedIn), sts("cache", optedIn), sts("web", nil),
		&v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: "billing", Name: "db"}},
		&v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: "billing", Name: "web"}},
	} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	recorder := events.NewFakeRecorder(100)
	ctl := &Controller{Client: c, Writer: rollout.NewWriter(c, c), Recorder: outcome.Recorder{EventRecorder: recorder}, Metrics: NewMetrics(""), Log: logr.Discard(),
		Options: Options{Rules: []Rule{{Namespace: "shop", RepositoryPrefixes: []string{"https://git.example.com/shop"}}}}}
	// Three rounds: each lists the StatefulSets (optedIn).
	for range 3 {
		if _, err := ctl.optedIn(ctx); err != nil {
			t.Fatal(err)
		}
	}

	want := `annotated claimwarden.dev/autoresize: "true", but namespace billing is not among autoresize.namespaces: the operator has not opted it in, so nothing is checked`
	status := func(name string) *v1alpha1.AutoresizeStatus {
		t.Helper()
		var vcr v1alpha1.VolumeClaimRollout
		if err := c.Get(ctx, client.ObjectKey{Namespace: "billing", Name: name}, &vcr); err != nil {
			t.Fatal(err)
		}
		return vcr.Status.Autoresize
	}
	if st := status("db"); st == nil || st.Message != want {
		t.Errorf("billing/db status %+v, want %q", st, want)
	}
	if st := status("web"); st != nil {
		t.Errorf("billing/web, not annotated: status %+v, want none", st)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "billing", Name: "cache"}, &v1alpha1.VolumeClaimRollout{}); !apierrors.IsNotFound(err) {
		t.Errorf("billing/cache without a VolumeClaimRollout: got %v, want none created", err)
	}
	var said []string
	for len(recorder.Events) > 0 {
		said = append(said, <-recorder.Events)
	}
	if len(said) != 1 || !strings.HasPrefix(said[0], "Warning "+ReasonNotOptedIn+" "+want) {
		t.Errorf("events %q, want one Warning %s", said, ReasonNotOptedIn)
	}
}
