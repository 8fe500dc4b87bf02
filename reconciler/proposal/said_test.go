package proposal

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestSaid(t *testing.T) {
	var s Said
	a := types.NamespacedName{Namespace: "flux-system", Name: "apps"}
	b := types.NamespacedName{Namespace: "flux-system", Name: "infra"}
	steps := []struct {
		obj         types.NamespacedName
		reason, msg string
		want        bool
	}{
		{a, "Suspended", "suspended", true},
		{a, "Suspended", "suspended", false},
		{a, "Force", "force is on", true},         // another reason does not
		{a, "Suspended", "suspended", false},      // make the first new again
		{b, "Suspended", "suspended", true},       // another object
		{a, "Suspended", "suspended again", true}, // another message
	}
	for i, st := range steps {
		if got := s.Once(st.obj, st.reason, st.msg); got != st.want {
			t.Errorf("step %d: Once(%s, %s, %q) = %v, want %v", i, st.obj, st.reason, st.msg, got, st.want)
		}
	}
	s.Forget(a)
	if !s.Once(a, "Force", "force is on") {
		t.Error("after Forget the object's messages are not new")
	}
	if s.Once(b, "Suspended", "suspended") {
		t.Error("Forget of one object dropped another's")
	}
}
