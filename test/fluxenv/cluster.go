package fluxenv

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// installCRDs installs the CRDs build.sh copied from the source-, kustomize- and
// helm-controller modules and waits until they are served. envtest's installer
// (as testenv's CRDDirs) creates or updates whole objects, so the size of the Flux
// CRDs is no issue (that limit is client-side apply's last-applied annotation), and
// a second Start on the same control plane finds them in place.
func installCRDs(ctx context.Context, env *testenv.Env) error {
	dir := filepath.Join(env.BinDir, crdDir)
	deadline, _ := ctx.Deadline()
	crds, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{
		Paths: []string{dir}, ErrorIfPathMissing: true, MaxTime: time.Until(deadline),
	})
	if err != nil {
		return fmt.Errorf("fluxenv: install CRDs from %s: %w", dir, err)
	}
	if len(crds) == 0 {
		return fmt.Errorf("fluxenv: no CRDs in %s: run `make testenv`", dir)
	}
	return nil
}

// createNamespace creates the runtime namespace unless it exists.
func createNamespace(ctx context.Context, env *testenv.Env, name string) error {
	c, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return err
	}
	_, err = c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("fluxenv: create namespace %s: %w", name, err)
	}
	return nil
}
