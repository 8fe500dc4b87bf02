package argoenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// fieldOwner is the field manager of everything Start applies.
const fieldOwner = "argoenv"

// partOf is the label Argo CD's settings manager selects its ConfigMaps and
// Secrets by; without it argocd-cm and argocd-secret are not seen.
var partOf = map[string]string{"app.kubernetes.io/part-of": "argocd"}

// installClusterObjects creates what an Argo CD installation keeps in the cluster
// (the programs themselves run outside it): the namespace, the CRDs, empty
// argocd-cm and argocd-rbac-cm, argocd-secret with the admin password, and
// what ApplicationNamespaces need.
func (a *ArgoCD) installClusterObjects(ctx context.Context, crdDir string) error {
	if err := a.applyCRDs(ctx, crdDir); err != nil {
		return err
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(a.AdminPassword), bcrypt.DefaultCost)
	if err != nil {
		return err
	}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: a.Namespace, Labels: partOf}
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: a.Namespace}},
		&corev1.ConfigMap{ObjectMeta: meta("argocd-cm")},
		&corev1.ConfigMap{ObjectMeta: meta("argocd-rbac-cm")},
		&corev1.Secret{ObjectMeta: meta("argocd-secret"), StringData: map[string]string{
			"admin.password": string(hash),
			// Tokens issued before this instant are rejected; a minute back keeps
			// the first login clear of clock rounding.
			"admin.passwordMtime": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339),
		}},
	}
	for _, o := range objs {
		if err := a.kube.Create(ctx, o); err != nil {
			return fmt.Errorf("create %T %s/%s: %w", o, o.GetNamespace(), o.GetName(), err)
		}
	}
	return a.installApplicationNamespaces(ctx)
}

// applyCRDs server-side applies every CRD in dir (too large for the annotation a
// client-side apply keeps) and waits until the API server serves them.
func (a *ArgoCD) applyCRDs(ctx context.Context, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no CRD YAML in %s: run `make testenv`", dir)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return fmt.Errorf("parse %s: %w", f, err)
		}
		if err := a.kube.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply CRD %s from %s: %w", u.GetName(), f, err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
			return fmt.Errorf("CRD %s from %s: %w", u.GetName(), f, err)
		}
		crds = append(crds, crd)
	}
	deadline, _ := ctx.Deadline()
	return envtest.WaitForCRDs(a.env.Config, crds, envtest.CRDInstallOptions{
		MaxTime: time.Until(deadline), PollInterval: 100 * time.Millisecond,
	})
}
