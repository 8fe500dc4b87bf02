package testenv

import (
	"path/filepath"

	"k8s.io/client-go/rest"
)

// writeAdminConfig sets e.Config and writes the same credentials, embedded, to
// <Dir>/admin.kubeconfig: the file is handed to kube-controller-manager,
// kube-scheduler, kwok, kubectl and any program a test runs.
func (e *Env) writeAdminConfig() error {
	e.Config = &rest.Config{
		Host: e.apiURL,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: e.pki.CA, CertData: e.pki.AdminCert, KeyData: e.pki.AdminKey,
		},
		// client-go's default of 5 QPS would make tests wait on the client side; the
		// server is local and otherwise idle.
		QPS:   100,
		Burst: 200,
	}
	e.Kubeconfig = filepath.Join(e.Dir, "admin.kubeconfig")
	return WriteKubeconfig(e.Kubeconfig, e.Config)
}
