package plan

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

func TestRestartForExpansionOf(t *testing.T) {
	sts := func(v ...string) *appsv1.StatefulSet {
		s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
		if len(v) > 0 {
			s.Annotations = map[string]string{v1alpha1.RestartForExpansionAnnotation: v[0]}
		}
		return s
	}
	for _, tc := range []struct {
		sts      *appsv1.StatefulSet
		fallback bool
		want     bool
	}{
		{sts(), false, false}, {sts(), true, true},
		{sts("true"), false, true}, {sts("false"), true, false},
	} {
		if got, err := RestartForExpansionOf(tc.sts, tc.fallback); err != nil || got != tc.want {
			t.Errorf("%v, fallback %v: got %v, %v; want %v", tc.sts.Annotations, tc.fallback, got, err, tc.want)
		}
	}
	_, err := RestartForExpansionOf(sts("yes"), true)
	if err == nil || !strings.Contains(err.Error(), "StatefulSet shop/web: annotation "+v1alpha1.RestartForExpansionAnnotation+`: "yes" is not "true" or "false"`) {
		t.Errorf("invalid value: %v, want an error naming the StatefulSet, annotation and value", err)
	}
}
