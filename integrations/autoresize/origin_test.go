package autoresize

import (
	"context"
	"testing"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// A proposal of a kind no enabled tool locates in Git is refused, naming
// the kind and the tools autoresize proposes pull requests for, before
// anything is read.
func TestLocateRefusesAKindNoToolLocates(t *testing.T) {
	c := &Controller{Tools: &source.Registry{}}
	_, err := c.locate(context.Background(), source.Applier{Source: v1alpha1.Source{Kind: "Application", Namespace: "argocd", Name: "shop"}}, c.Reader)
	if want := "proposed by a Application: autoresize proposes pull requests for Flux Kustomizations, HelmReleases and Argo CD Applications"; err == nil || err.Error() != want {
		t.Errorf("an Application without Argo CD enabled: %v, want %q", err, want)
	}
}
