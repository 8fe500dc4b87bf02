package proposal

import (
	"fmt"
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

func TestSaidIsBounded(t *testing.T) {
	var s Said
	first := types.NamespacedName{Namespace: "shop", Name: "db-0"}
	s.Once(first, "Superseded", "r1")
	for i := range maxSaid {
		s.Once(types.NamespacedName{Namespace: "shop", Name: fmt.Sprintf("db-%d", i+1)}, "Superseded", "r1")
	}
	if n := s.cache().Len(); n != maxSaid {
		t.Errorf("Said holds %d messages, want at most %d", n, maxSaid)
	}
	if !s.Once(first, "Superseded", "r1") {
		t.Error("the oldest message was not the one forgotten")
	}
}
