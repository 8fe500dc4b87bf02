package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/storagesim"
	"github.com/claimwarden/claimwarden/test/testenv"
)

const (
	// storageClass is the simulator's class on both clusters.
	storageClass = "spokescale-sim"
	// accountNamespace and accountName are claimwarden's ServiceAccount on
	// each cluster.
	accountNamespace = "kube-system"
	accountName      = "claimwarden"
)

// accountUser is the user the API server sees for claimwarden's token.
var accountUser = "system:serviceaccount:" + accountNamespace + ":" + accountName

// cluster is one control plane of the run (the hub or the spoke) with its
// storage simulator and claimwarden's credential there.
type cluster struct {
	name string
	env  *testenv.Env
	// c is an admin client.
	c client.Client
	// account reaches the API server as claimwarden's ServiceAccount, bound
	// to cluster-admin as test/scale's is: the run measures memory and
	// watches, which RBAC does not change.
	account *rest.Config
}

// startCluster starts a control plane with kwok, the audit log of claim and
// StatefulSet writes (latency.go reads it), the CRDs and the storage
// simulator, and returns it with the function that stops both.
func startCluster(ctx context.Context, root, name string, delay time.Duration) (cl *cluster, stop func() error, err error) {
	stop = func() error { return nil }
	// A loaded machine needs longer than testenv's default 90 s start deadline.
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	env, err := testenv.Start(startCtx, testenv.Options{
		Kwok: true, Audit: true,
		CRDDirs: []string{filepath.Join(root, "config", "crd", "bases")},
	})
	if err != nil {
		return nil, stop, fmt.Errorf("the %s's control plane: %w", name, err)
	}
	stop = env.Stop
	cl = &cluster{name: name, env: env}
	if cl.c, err = client.New(env.Config, client.Options{Scheme: scheme()}); err != nil {
		return nil, stop, err
	}
	if err := cl.c.Create(ctx, storagesim.StorageClass(storageClass, true)); err != nil {
		return nil, stop, fmt.Errorf("the %s's StorageClass: %w", name, err)
	}
	if cl.account, err = createAccount(ctx, cl); err != nil {
		return nil, stop, err
	}
	simCtx, simCancel := context.WithCancel(context.WithoutCancel(ctx))
	simDone := make(chan error, 1)
	go func() { simDone <- (&storagesim.Simulator{Delay: delay}).Start(simCtx, env.Config) }()
	return cl, func() error {
		simCancel()
		var errs []error
		if err := <-simDone; err != nil {
			errs = append(errs, fmt.Errorf("the %s's storage simulator: %w", name, err))
		}
		return errors.Join(append(errs, env.Stop())...)
	}, nil
}

// createAccount creates claimwarden's ServiceAccount on cl, binds it to
// cluster-admin and returns a configuration with a token for it.
func createAccount(ctx context.Context, cl *cluster) (*rest.Config, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: accountNamespace, Name: accountName}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "spokescale:" + accountName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: accountNamespace, Name: accountName}},
	}
	for _, o := range []client.Object{sa, binding} {
		if err := cl.c.Create(ctx, o); err != nil {
			return nil, fmt.Errorf("the %s's %T %s: %w", cl.name, o, o.GetName(), err)
		}
	}
	return cl.env.ServiceAccountConfig(ctx, accountNamespace, accountName)
}

// scheme knows the built-in kinds and VolumeClaimRollouts.
func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err) // the generated schemes always register
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}
