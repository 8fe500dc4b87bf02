package autoresize

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The emergency path grows the claims a policy asked to grow now, to the
// new size, and never a template's claims again while one of them is
// larger than the template: claims lead Git by one pull request at most.
// CI saw why: with data-web-* grown to 2Gi for an open pull request, each
// check grew them again (3Gi, 4Gi...), and the merged 2Gi was then smaller
// than the claims, which increase-only denies: the merge was never applied.
func TestNowGrowths(t *testing.T) {
	growths := []Growth{
		{Template: "logs", Index: 0, From: resource.MustParse("1Gi"), To: resource.MustParse("2Gi"),
			Claims: []ClaimGrowth{{Name: "logs-web-0", Now: true}}},
		{Template: "data", Index: 1, From: resource.MustParse("10Gi"), To: resource.MustParse("13Gi"),
			Claims: []ClaimGrowth{{Name: "data-web-0", Now: true}, {Name: "data-web-1"}}},
	}
	names := func(todo []nowGrowth) map[string]string {
		out := map[string]string{}
		for _, g := range todo {
			out[g.name] = g.to.String()
		}
		return out
	}

	s := shop("100Gi")
	todo, held := nowGrowths(s.Live, s.Claims, growths)
	if want := map[string]string{"logs-web-0": "2Gi", "data-web-0": "13Gi"}; !reflect.DeepEqual(names(todo), want) || held != nil {
		t.Errorf("at their templates: grow %v, held %v; want %v, none held", names(todo), held, want)
	}

	// data-web-1 grew to 12Gi before the merge of a pull request the
	// StatefulSet does not have yet: data waits, logs grows.
	s.Claims[3].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("12Gi")
	todo, held = nowGrowths(s.Live, s.Claims, growths)
	if want := map[string]string{"logs-web-0": "2Gi"}; !reflect.DeepEqual(names(todo), want) || !reflect.DeepEqual(held, []string{"data-web-1"}) {
		t.Errorf("data-web-1 ahead: grow %v, held %v; want %v, data-web-1 held", names(todo), held, want)
	}
	if got := heldText(held); got != "; not grown now: data-web-1 larger than the template already, until the StatefulSet has the size merged last" {
		t.Errorf("held text %q", got)
	}

	// Grown now already to what the open pull request proposes: nothing
	// to grow, nothing held back.
	s = shop("100Gi")
	s.Claims[2].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("13Gi")
	todo, held = nowGrowths(s.Live, s.Claims, growths[1:])
	if len(todo) != 0 || held != nil {
		t.Errorf("data-web-0 at 13Gi already: grow %v, held %v; want nothing", names(todo), held)
	}
}
