package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// vcrHealthKey is the argocd-cm key of a health check for VolumeClaimRollouts.
const vcrHealthKey = "resource.customizations.health.claimwarden.dev_VolumeClaimRollout"

// The shipped health check (config/argocd/health-vcr.lua) installed in the
// real Argo CD: the Application managing a StatefulSet shows the rollout,
// its child, Healthy once the claims grew and Degraded when a policy denies
// the next change.
func TestArgoCDShowsRolloutHealth(t *testing.T) {
	cl := started(t)
	ctx := context.Background()
	argo := startArgoCD(t)
	lua, err := os.ReadFile(filepath.Join("..", "..", "config", "argocd", "health-vcr.lua"))
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: argo.Namespace, Name: "argocd-cm"}}
	patch := client.MergeFrom(cm.DeepCopy())
	cm.Data = map[string]string{vcrHealthKey: string(lua)}
	if err := cl.admin.Patch(ctx, cm, patch); err != nil {
		t.Fatal(err)
	}

	g := startGitea(t)
	ctl := startArgoController(t, cl, argo, g, "health", argo.Namespace)

	s, _ := setupArgoScenario(t, cl, g, argo, ctl, argoApp{name: "health"})
	sha := s.commit("2Gi", "", "web at 2Gi")
	s.application(sha, "Synced", synced)
	waitRolloutDone(t, cl.admin, s.sts, 2, "2Gi", ctl)
	s.waitVCRHealth("Healthy", "2/2")

	s.commit("8Gi", "", "web at 8Gi (+300%)")
	s.waitVCRHealth("Degraded", "PolicyDenied")
}

// waitVCRHealth waits until the Application's resource tree shows the
// StatefulSet's VolumeClaimRollout with health status and a message
// containing want.
func (s *argoScenario) waitVCRHealth(status, want string) {
	s.t.Helper()
	path := fmt.Sprintf("/api/v1/applications/%s/resource-tree?appNamespace=%s", url.PathEscape(s.app.Name), url.QueryEscape(s.app.Namespace))
	waitFor(s.t, fmt.Sprintf("VolumeClaimRollout %s %s in Argo CD (%q)", s.sts, status, want), []*controller{s.ctl}, func(ctx context.Context) (bool, error) {
		var tree struct {
			Nodes []struct {
				Group, Kind, Namespace, Name string
				Health                       *struct{ Status, Message string }
			}
		}
		if err := s.argo.API(ctx, "GET", path, nil, &tree); err != nil {
			return false, err
		}
		for _, n := range tree.Nodes {
			if n.Group == "claimwarden.dev" && n.Kind == "VolumeClaimRollout" && n.Namespace == s.sts.Namespace && n.Name == s.sts.Name {
				if n.Health == nil || n.Health.Status != status || !strings.Contains(n.Health.Message, want) {
					return false, fmt.Errorf("health %+v", n.Health)
				}
				return true, nil
			}
		}
		return false, fmt.Errorf("no VolumeClaimRollout in the resource tree of %d nodes", len(tree.Nodes))
	})
}
