package testenv

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// noProvisioner names the StorageClass provisioner and CSI driver that nothing runs.
const noProvisioner = "does-not-exist.claimwarden.example"

// env is the shared control plane of this package's tests, with kwok.
var env *Env

func TestMain(m *testing.M) {
	if os.Getenv(orphanChildEnv) != "" {
		orphanChild() // never returns: see lifecycle_test.go
	}
	os.Exit(RunTests(m, Options{Kwok: true, CRDDirs: []string{"../../config/crd/bases"}, Audit: true}, &env))
}

// TestCRDsAreServed: Start returns only once the CRDs from CRDDirs are served.
func TestCRDsAreServed(t *testing.T) {
	c := kubernetes.NewForConfigOrDie(env.Config)
	list, err := c.Discovery().ServerResourcesForGroupVersion("claimwarden.dev/v1alpha1")
	must(t, err)
	for _, r := range list.APIResources {
		if r.Name == "volumeclaimrollouts" {
			return
		}
	}
	t.Fatalf("volumeclaimrollouts not served: %+v", list.APIResources)
}

func TestStartupTime(t *testing.T) {
	t.Logf("Start (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok + Ready node) took %v", env.StartupTime)
}

// TestStatefulSetWithClaimsBecomesReady drives the real StatefulSet controller, PV
// binder, scheduler and kwok: the claims' provisioner does not exist, so the test
// pre-creates PVs bound to the claims the controller will create, as a static
// provisioner would, and the PV binder has to match them.
func TestStatefulSetWithClaimsBecomesReady(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c := kubernetes.NewForConfigOrDie(env.Config)
	ns := createNamespace(ctx, t, c, "sts")

	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: ns},
		Provisioner:       noProvisioner,
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}
	must(t, create(ctx, c.StorageV1().StorageClasses(), sc))
	for i := range 2 {
		must(t, create(ctx, c.CoreV1().PersistentVolumes(), preboundPV(ns, fmt.Sprintf("data-web-%d", i))))
	}
	must(t, create(ctx, c.AppsV1().StatefulSets(ns), statefulSet(ns, 2)))

	eventually(ctx, t, "StatefulSet web has 2 ready replicas", func() error {
		sts, err := c.AppsV1().StatefulSets(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if sts.Status.ReadyReplicas != 2 {
			return fmt.Errorf("readyReplicas=%d", sts.Status.ReadyReplicas)
		}
		return nil
	})
	for i := range 2 {
		pvc, err := c.CoreV1().PersistentVolumeClaims(ns).Get(ctx, fmt.Sprintf("data-web-%d", i), metav1.GetOptions{})
		must(t, err)
		if mgr := pvc.ManagedFields[0].Manager; mgr != "kube-controller-manager" {
			t.Errorf("PVC %s created by %q, want the StatefulSet controller in kube-controller-manager", pvc.Name, mgr)
		}
		if pvc.Status.Phase != corev1.ClaimBound || pvc.Spec.VolumeName != "pv-"+pvc.Name+"-"+ns {
			t.Errorf("PVC %s: phase %s, volume %q; want Bound to its pre-created PV", pvc.Name, pvc.Status.Phase, pvc.Spec.VolumeName)
		}
		pod, err := c.CoreV1().Pods(ns).Get(ctx, fmt.Sprintf("web-%d", i), metav1.GetOptions{})
		must(t, err)
		if pod.Spec.NodeName != env.NodeName || pod.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s: node %q phase %s; want Running on %s", pod.Name, pod.Spec.NodeName, pod.Status.Phase, env.NodeName)
		}
	}
}

// TestServiceAccountRBACIsEnforced shows that ConfigFor goes through RBAC: the
// ServiceAccount may not list Secrets until a RoleBinding grants it.
func TestServiceAccountRBACIsEnforced(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	admin := kubernetes.NewForConfigOrDie(env.Config)
	ns := createNamespace(ctx, t, admin, "rbac")
	sa := kubernetes.NewForConfigOrDie(env.ConfigFor("system:serviceaccount:" + ns + ":y"))

	if _, err := sa.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("ServiceAccount listing secrets: got %v, want Forbidden", err)
	}
	if _, err := admin.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("admin listing secrets: %v", err)
	}

	must(t, create(ctx, admin.RbacV1().Roles(ns), &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "read-secrets"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}}},
	}))
	must(t, create(ctx, admin.RbacV1().RoleBindings(ns), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "read-secrets"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-secrets"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "y", Namespace: ns}},
	}))
	// The RBAC authorizer reads bindings from an informer, so the grant lands shortly.
	eventually(ctx, t, "the bound ServiceAccount may list secrets", func() error {
		_, err := sa.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
		return err
	})
	if _, err := sa.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("ServiceAccount listing secrets outside its namespace: got %v, want Forbidden", err)
	}
}

func statefulSet(ns string, replicas int32) *appsv1.StatefulSet {
	labels := map[string]string{"app": "web"}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:         "web",
					Image:        "registry.invalid/never-pulled:1", // kwok runs nothing
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
				}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					StorageClassName: ptr.To(ns),
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceStorage: resource.MustParse("1Gi"),
					}},
				},
			}},
		},
	}
}

// preboundPV is a CSI volume reserved for one claim by its claimRef, as a static
// provisioner would create it; nothing mounts it under kwok.
func preboundPV(ns, claim string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-" + claim + "-" + ns},
		Spec: corev1.PersistentVolumeSpec{
			StorageClassName: ns,
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity:         corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			ClaimRef:         &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: ns, Name: claim},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: noProvisioner, VolumeHandle: claim + "-" + ns,
			}},
		},
	}
}
