package source

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// AtRest is a tool that finds which of its objects applies a StatefulSet
// no proposal names (autoresize's StatefulSets at rest): what the
// StatefulSet says (the tool's labels or tracking annotation, which its
// writer sets) names the tool object, and the tool's own record must
// confirm it.
type AtRest interface {
	// Kind and NewObject are the tool's (Reader).
	Kind() string
	NewObject() client.Object
	// Names is the tool object that live says applies it; false when it
	// names none. live is a StatefulSet, or a tool object a parent applies.
	Names(live metav1.Object) (types.NamespacedName, bool)
	// ManagesAtRest is Manages (Owner) for a StatefulSet no proposal
	// names, read in cluster (claimwarden's name for it, Desired.Cluster;
	// "" its own): nil when the tool's own record says obj applies live
	// there. A tool object applying to another cluster applies nothing
	// here, whatever its record names.
	ManagesAtRest(ctx context.Context, obj client.Object, cluster string, live *appsv1.StatefulSet) error
	// Authority is the tool's (Owner).
	Authority(ctx context.Context, obj client.Object) (*v1alpha1.Identity, error)
}

// Parent is a tool whose objects apply other tool objects from Git (a
// Kustomization a HelmRelease, an Application an Application).
type Parent interface {
	AtRest
	// Applies says why parent does not apply the object of kind gk obj,
	// or nil when its own record says it does.
	Applies(ctx context.Context, parent client.Object, gk schema.GroupKind, obj metav1.Object) error
	// LocateSource is where parent reads from in Git (its repository,
	// branch and path), without the values it sets itself.
	LocateSource(ctx context.Context, parent client.Object) (Where, error)
}
