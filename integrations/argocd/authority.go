package argocd

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// Authority implements source.Tool with Argo CD's sync impersonation
// (controller/sync.go): when argocd-cm enables it, a sync applies as the
// AppProject's destination service account for the Application's
// destination; without one Argo CD refuses to sync unless enforcement is
// off, when it falls back to its controller. Its controller applies as
// itself, so that is nil.
func (r *Applications) Authority(ctx context.Context, obj client.Object) (*v1alpha1.Identity, error) {
	u := obj.(*unstructured.Unstructured)
	app, err := applicationOf(u)
	if err != nil {
		return nil, err
	}
	s, err := r.settings(ctx)
	if err != nil || !s.impersonation {
		return nil, err
	}
	c, err := r.clusterOf(app.Spec.Destination)
	if err != nil {
		return nil, err
	}
	proj, err := r.project(ctx, app.projectName())
	if err != nil {
		return nil, err
	}
	id, err := impersonated(proj.Spec, app.Spec.Destination, c.Server, u.GetNamespace())
	if errors.Is(err, errNoServiceAccount) && !s.enforced {
		return nil, nil
	}
	return id, err
}
