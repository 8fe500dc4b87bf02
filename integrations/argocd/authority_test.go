package argocd

import (
	"context"
	"strings"
	"testing"
)

func TestAuthority(t *testing.T) {
	const local = "{server: https://kubernetes.default.svc, namespace: shop}"
	on := map[string]string{"application.sync.impersonation.enabled": "true"}
	for _, tc := range []struct {
		name    string
		data    map[string]string
		project string
		dest    string
		want    string // the user; "" for nil
		wantErr string
	}{
		{name: "impersonation off: Argo CD applies as itself", dest: local},
		{name: "impersonation on", data: on, dest: local, want: "system:serviceaccount:shop:deployer"},
		{name: "impersonation on, by cluster name", data: on, dest: "{name: in-cluster, namespace: shop}", want: "system:serviceaccount:shop:deployer"},
		{name: "impersonation on, no account", data: on, dest: "{server: https://kubernetes.default.svc, namespace: team-shop}", wantErr: "no destinationServiceAccounts entry"},
		{name: "impersonation on, not enforced, no account: Argo CD applies as itself",
			data: map[string]string{"application.sync.impersonation.enabled": "true", "application.sync.impersonation.enforced": "false"},
			dest: "{server: https://kubernetes.default.svc, namespace: team-shop}"},
		{name: "impersonation on, no such project", data: on, project: "bank", dest: local, wantErr: "reading AppProject argocd/bank"},
		{name: "impersonation on, a cluster not resolved", data: on, dest: "{name: prod, namespace: shop}", wantErr: `cluster "prod"`},
		// The spoke's own entry, matched by its server whether the
		// destination names it by server or by Argo CD's name: the
		// account the rollout then asks the spoke about.
		{name: "impersonation on, a spoke by name", data: on, project: "fleet", dest: "{name: prod-eu, namespace: shop}", want: "system:serviceaccount:shop:eu-deployer"},
		{name: "impersonation on, a spoke by server", data: on, project: "fleet", dest: "{server: 'https://eu.example:6443', namespace: shop}", want: "system:serviceaccount:shop:eu-deployer"},
		{name: "impersonation on, a spoke without an entry", data: on, dest: "{name: prod-eu, namespace: shop}", wantErr: "no destinationServiceAccounts entry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			project := tc.project
			if project == "" {
				project = "shop"
			}
			id, err := argoCD(t, tc.data, shopProject, fleetProject).Authority(context.Background(), shopApp(t, "argocd", project, tc.dest))
			got := ""
			if id != nil {
				got = id.User
			}
			if got != tc.want || (tc.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Authority = %q, %v; want %q, error %q", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
