package source

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestMemoryIsBounded(t *testing.T) {
	m, err := newMemory(2)
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := types.NamespacedName{Name: "a"}, types.NamespacedName{Name: "b"}, types.NamespacedName{Name: "c"}
	m.markProposed(a, "r1")
	m.sayOnce(a, Note{Reason: "Suspended", Message: "suspended"})
	m.markProposed(b, "r1")
	m.markProposed(c, "r1")
	if n := m.objects.Len(); n != 2 {
		t.Errorf("%d objects remembered, want at most 2", n)
	}
	if m.alreadyProposed(a, "r1") || !m.alreadyProposed(b, "r1") || !m.alreadyProposed(c, "r1") {
		t.Error("not the least recently used object was forgotten")
	}
	if !m.sayOnce(a, Note{Reason: "Suspended", Message: "suspended"}) {
		t.Error("a forgotten object's note was not new")
	}
}

func TestMemorySkipKeepsOnlyItsNotes(t *testing.T) {
	m, err := newMemory(4)
	if err != nil {
		t.Fatal(err)
	}
	a := types.NamespacedName{Name: "a"}
	force := Note{Reason: "Force", Message: "force is on"}
	suspended := Note{Reason: "Suspended", Message: "suspended"}
	m.markProposed(a, "r1")
	m.sayOnce(a, force)
	if fresh := m.skip(a, []Note{suspended}); len(fresh) != 1 {
		t.Errorf("first skip: %d fresh notes, want the suspension", len(fresh))
	}
	if fresh := m.skip(a, []Note{suspended}); len(fresh) != 0 {
		t.Errorf("second skip: fresh notes %v, want none", fresh)
	}
	if m.alreadyProposed(a, "r1") {
		t.Error("the revision key outlived the skip")
	}
	if !m.sayOnce(a, force) {
		t.Error("a note said before the skip was not new after it")
	}
}

func TestMemoryNotesAreSaidAgainWhenTheyComeBack(t *testing.T) {
	m, err := newMemory(4)
	if err != nil {
		t.Fatal(err)
	}
	a := types.NamespacedName{Name: "a"}
	force := Note{Reason: "Force", Message: "force is on"}
	nothing := Note{Reason: ReasonNothingToDo, Message: "revision r1 changes nothing"}
	m.sayOnce(a, nothing)
	steps := []struct {
		notes []Note
		fresh int
	}{
		{[]Note{force}, 1},
		{[]Note{force}, 0},
		{nil, 0},
		{[]Note{force}, 1}, // switched on again
	}
	for i, st := range steps {
		if fresh := m.notes(a, st.notes); len(fresh) != st.fresh {
			t.Errorf("step %d: fresh notes %v, want %d", i, fresh, st.fresh)
		}
	}
	if m.sayOnce(a, nothing) {
		t.Error("the nothing-to-do message was forgotten by a reading")
	}
}
