package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/cmd/claimwarden/app/check"
	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// Item 6b of issue 12, against a cluster: a StatefulSet scaled down keeps
// the claims of its former replicas, and the controller compares them with
// the new templates once it scales up again; check asks about them now.
func TestCheckClaimsBeyondReplicasInCluster(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	ctx := context.Background()
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	expand := true
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: "csi.example.com", AllowVolumeExpansion: &expand},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	objs, err := manifests.Decode(strings.NewReader(statefulSet("web", 1, "10Gi", "", "")), "web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sets, _, err := manifests.StatefulSets(objs)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, sets[0].StatefulSet); err != nil {
		t.Fatal(err)
	}
	tmpl := sets[0].Spec.VolumeClaimTemplates[0]
	for _, name := range []string{"data-web-0", "data-web-2", "data-web-7", "data-web-07"} {
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: map[string]string{"app": "web"}}, Spec: tmpl.Spec}
		if err := c.Create(ctx, pvc); err != nil {
			t.Fatal(err)
		}
		pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: tmpl.Spec.AccessModes,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}}
		if err := c.Status().Update(ctx, pvc); err != nil {
			t.Fatal(err)
		}
	}
	pr := filepath.Join(t.TempDir(), "web.yaml")
	if err := os.WriteFile(pr, []byte(statefulSet("web", 1, "40Gi", "", "")), 0o600); err != nil {
		t.Fatal(err)
	}
	const user = "checker"
	for _, obj := range []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"list"}},
			{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims", "namespaces", "resourcequotas"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"list"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr strings.Builder
	code := execute(ctx, []string{"check", "-f", pr, "--kubeconfig", impersonatingKubeconfig(t, env, user), "-o", "json"}, nil, &stdout, &stderr)
	var report check.Report
	if err := json.Unmarshal([]byte(stdout.String()), &report); err != nil || code != exitDenied || len(report.StatefulSets) != 1 {
		t.Fatalf("exit %d, report %v:\n%s%s", code, err, stdout.String(), stderr.String())
	}
	var names []string
	for _, cl := range report.StatefulSets[0].Claims {
		if cl.Verdict == check.Denied {
			names = append(names, cl.Name)
		}
	}
	// data-web-07 is no claim of the StatefulSet: it prints no leading zero.
	if got := strings.Join(names, " "); got != "data-web-0 data-web-2 data-web-7" {
		t.Errorf("denied claims %q, want data-web-0 data-web-2 data-web-7:\n%s", got, stdout.String())
	}
}
