package converge

// Progress is how far Converge or Resume brought a StatefulSet. Neither
// waits for the garbage collector: a worker that did would be held for as
// long as orphaning the Pods takes, so the caller requeues on Waiting.
type Progress int

const (
	// NothingRecorded: Resume found no re-create to finish, or dropped a
	// record whose delete never happened (the caller converges afresh). It
	// is also the value returned with every error.
	NothingRecorded Progress = iota
	// Updated: Converge wrote desired in place; nothing was deleted.
	Updated
	// Waiting: the old object is orphan-deleted but still present (the
	// garbage collector is orphaning its dependents, or another finalizer
	// holds it). The record stays; call Resume again later.
	Waiting
	// Recreated: the new object exists, created by us, and the record is
	// cleared.
	Recreated
	// Adopting: nothing done; live must first adopt its Pods and
	// ControllerRevisions (kubernetes/kubernetes#131284, see unadopted).
	// Call Converge again later.
	Adopting
)

func (p Progress) String() string {
	switch p {
	case NothingRecorded:
		return "nothing recorded"
	case Updated:
		return "updated in place"
	case Waiting:
		return "waiting for the delete"
	case Recreated:
		return "re-created"
	case Adopting:
		return "waiting for the StatefulSet to adopt its Pods and revisions"
	}
	return "unknown progress"
}
