package helm

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A StatefulSet at rest is a HelmRelease's only when the release's own
// record holds it, in the release namespace: the labels and annotations
// that name the HelmRelease are whatever the StatefulSet's writer set,
// another team's HelmRelease included. On a real API server.
func TestHelmReleaseManagesAtRestWhatItsRecordHolds(t *testing.T) {
	c := kube(t)
	ctx := context.Background()
	hr := failedRelease(immutable)
	create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, hr, releaseSecret(t, "shop", 4))
	// named is a StatefulSet whose labels and annotations name hr and
	// its release as helm-controller's would.
	named := func(ns, name string) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels:      map[string]string{HelmReleaseNameLabel: "web", HelmReleaseNamespaceLabel: "shop"},
			Annotations: map[string]string{annotationReleaseName: "web", annotationReleaseNamespace: "shop"}}}
	}
	tool := &HelmReleases{Reader: c}
	for _, tc := range []struct {
		name string
		live *appsv1.StatefulSet
		why  string
	}{
		{"its own", named("shop", "web"), ""},
		{"not in its record", named("shop", "db"), "release web.v4 of HelmRelease shop/web holds no StatefulSet shop/db"},
		{"another namespace's", named("tenant-b", "web"), "HelmRelease shop/web releases into namespace shop, not tenant-b"},
		{"unlabelled", ownedStatefulSet("shop", "web", "shop", nil), "do not name HelmRelease"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tool.ManagesAtRest(ctx, hr, "", tc.live)
			switch {
			case tc.why == "" && err != nil:
				t.Errorf("ManagesAtRest = %v, want managed", err)
			case tc.why != "" && (err == nil || !strings.Contains(err.Error(), tc.why)):
				t.Errorf("ManagesAtRest = %v, want a refusal saying %q", err, tc.why)
			}
		})
	}
	none := hr.DeepCopy()
	none.Status.History = nil
	if err := tool.ManagesAtRest(ctx, none, "", named("shop", "web")); err == nil || !strings.Contains(err.Error(), "has no release yet") {
		t.Errorf("no release: %v, want refused", err)
	}
}
