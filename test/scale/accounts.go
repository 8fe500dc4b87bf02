package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// accountNamespace holds the run's ServiceAccounts.
const accountNamespace = "kube-system"

// accountConfig creates the ServiceAccount name, binds it to cluster-admin
// and returns a configuration with a token for it: the controller (through
// the proxy, with the manual procedure's script) and the storage simulator
// authenticate as a cluster's Pods do, and are authorized by RBAC, rather
// than with the admin's client certificate, whose verification on every
// request was 8–12% of the API server's CPU in a profile (issue 31).
func (r *runner) accountConfig(ctx context.Context, name string) (*rest.Config, error) {
	cs, err := kubernetes.NewForConfig(r.env.Config)
	if err != nil {
		return nil, err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: accountNamespace, Name: name}}
	if _, err := cs.CoreV1().ServiceAccounts(accountNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("ServiceAccount %s: %w", name, err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "scale:" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: accountNamespace, Name: name}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("binding ServiceAccount %s: %w", name, err)
	}
	return r.env.ServiceAccountConfig(ctx, accountNamespace, name)
}
