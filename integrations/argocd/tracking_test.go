package argocd

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseTrackingID(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  trackingID
		bad   bool
	}{
		{value: "shop:apps/StatefulSet:shop/web", want: trackingID{App: "shop", Group: "apps", Kind: "StatefulSet", Namespace: "shop", Name: "web"}},
		{value: "team-a_shop:apps/StatefulSet:team-shop/web", want: trackingID{App: "team-a_shop", Group: "apps", Kind: "StatefulSet", Namespace: "team-shop", Name: "web"}},
		{value: "shop:/Service:shop/web", want: trackingID{App: "shop", Kind: "Service", Namespace: "shop", Name: "web"}},
		{value: "shop:rbac.authorization.k8s.io/ClusterRole:shop/system:web", want: trackingID{App: "shop", Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Namespace: "shop", Name: "system:web"}},
		{value: "shop", bad: true},
		{value: "shop:apps/StatefulSet", bad: true},
		{value: "shop:StatefulSet:shop/web", bad: true},
		{value: "shop:apps/StatefulSet:web", bad: true},
		{value: "shop:apps/v1/StatefulSet:shop/web", bad: true},
	} {
		got, err := parseTrackingID(tc.value)
		if tc.bad != (err != nil) || got != tc.want {
			t.Errorf("parseTrackingID(%q) = %+v, %v; want %+v, error %v", tc.value, got, err, tc.want, tc.bad)
		}
	}
}

func TestInstanceName(t *testing.T) {
	for _, tc := range []struct{ namespace, want string }{
		{"argocd", "shop"},
		{"", "shop"},
		{"team-a", "team-a_shop"},
	} {
		if got := instanceName(tc.namespace, "shop", "argocd"); got != tc.want {
			t.Errorf("instanceName(%q, shop) = %q, want %q", tc.namespace, got, tc.want)
		}
	}
}

// tracked is shop/web with annotations.
func tracked(annotations map[string]string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Annotations: annotations}}
}

func TestTrackedBy(t *testing.T) {
	const id = "argocd.argoproj.io/tracking-id"
	for _, tc := range []struct {
		name           string
		annotations    map[string]string
		instance       string
		installationID string
		want           string // part of the refusal; "" when tracked
	}{
		{"tracked", map[string]string{id: "shop:apps/StatefulSet:shop/web"}, "shop", "", ""},
		{"in another namespace's Application", map[string]string{id: "team-a_shop:apps/StatefulSet:shop/web"}, "team-a_shop", "", ""},
		{"not tracked", nil, "shop", "", "carries no Argo CD tracking-id"},
		{"another Application's", map[string]string{id: "bank:apps/StatefulSet:shop/web"}, "shop", "", `names Application "bank", not "shop"`},
		{"the same name in another namespace", map[string]string{id: "shop:apps/StatefulSet:shop/web"}, "team-a_shop", "", `not "team-a_shop"`},
		{"copied from another object", map[string]string{id: "shop:apps/StatefulSet:shop/db"}, "shop", "", "names another resource"},
		{"copied from another kind", map[string]string{id: "shop:apps/Deployment:shop/web"}, "shop", "", "names another resource"},
		{"copied from another namespace", map[string]string{id: "shop:apps/StatefulSet:bank/web"}, "shop", "", "names another resource"},
		{"malformed", map[string]string{id: "shop"}, "shop", "", "is not <application>"},
		{"the installation's", map[string]string{id: "shop:apps/StatefulSet:shop/web", "argocd.argoproj.io/installation-id": "eu-1"}, "shop", "eu-1", ""},
		{"another installation's", map[string]string{id: "shop:apps/StatefulSet:shop/web", "argocd.argoproj.io/installation-id": "us-1"}, "shop", "eu-1", `installation ID "eu-1"`},
		{"no installation's", map[string]string{id: "shop:apps/StatefulSet:shop/web"}, "shop", "eu-1", `installation ID "eu-1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := trackedBy(tracked(tc.annotations), statefulSetKind, tc.instance, tc.installationID)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("trackedBy(%v, %q) = %v, want %q", tc.annotations, tc.instance, err, tc.want)
			}
		})
	}
}
