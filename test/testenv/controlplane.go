package testenv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// serviceCIDR is the Service range; the serving certificate covers its first address.
const serviceCIDR = "10.0.0.0/24"

// startEtcd runs a single-member etcd on loopback. --unsafe-no-fsync: the data is
// thrown away after the run, and fsync dominates etcd latency on CI disks.
// A restart (keepData) runs on the same ports and data.
func (e *Env) startEtcd(clientPort, peerPort int, keepData bool) (*Process, error) {
	client := "http://127.0.0.1:" + strconv.Itoa(clientPort)
	peer := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	e.etcdURL, e.etcdPorts = client, [2]int{clientPort, peerPort}
	data := filepath.Join(e.Dir, "etcd-data")
	if !keepData {
		// A reused Dir must not resurrect the last run's cluster (nor its peer URLs).
		if err := os.RemoveAll(data); err != nil {
			return nil, err
		}
	}
	return e.startComponent("etcd", []string{
		"--name", "default",
		"--data-dir", data,
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "default=" + peer,
		"--unsafe-no-fsync",
	})
}

// etcdReady: etcd's /health answers {"health":"true"} once it serves requests.
func (e *Env) etcdReady(ctx context.Context) error {
	body, err := HTTPGet(ctx, http.DefaultClient, e.etcdURL+"/health")
	if err == nil && !strings.Contains(body, `"health":"true"`) {
		err = fmt.Errorf("etcd /health: %s", body)
	}
	return err
}

// startAPIServer runs kube-apiserver as a real cluster would be configured for what
// the tests need: client certificates (the admin is in system:masters), Node and RBAC
// authorization (so impersonated ServiceAccounts are really checked), and a
// service-account key pair shared with kube-controller-manager.
func (e *Env) startAPIServer(port int) (*Process, error) {
	e.apiURL, e.apiPort = "https://127.0.0.1:"+strconv.Itoa(port), port
	args := []string{
		"--etcd-servers", e.etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(port),
		// The default reconciler refuses a loopback advertise address.
		"--endpoint-reconciler-type", "none",
		"--cert-dir", filepath.Join(e.Dir, "kube-apiserver"),
		"--tls-cert-file", e.pki.ServingCert, "--tls-private-key-file", e.pki.ServingKey,
		"--client-ca-file", e.pki.CAFile,
		// Published in kube-system/extension-apiserver-authentication; without it
		// kube-controller-manager and kube-scheduler log an error about the missing
		// bundle several times a second. No certificate is issued to the allowed
		// name, so nobody can actually use the headers.
		"--requestheader-client-ca-file", e.pki.CAFile,
		"--requestheader-allowed-names", "front-proxy-client",
		"--requestheader-username-headers", "X-Remote-User",
		"--requestheader-group-headers", "X-Remote-Group",
		"--requestheader-extra-headers-prefix", "X-Remote-Extra-",
		"--authorization-mode", "Node,RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", e.pki.SAPub,
		"--service-account-signing-key-file", e.pki.SAKey,
		"--service-cluster-ip-range", serviceCIDR,
		"--allow-privileged=true",
	}
	if !e.opts.Controllers {
		// The ServiceAccount admission plugin rejects Pods until the namespace's
		// "default" ServiceAccount exists, and only kube-controller-manager creates it.
		args = append(args, "--disable-admission-plugins", "ServiceAccount")
	}
	if e.opts.Audit {
		audit, err := e.auditFlags()
		if err != nil {
			return nil, err
		}
		args = append(args, audit...)
	}
	return e.startComponent("kube-apiserver", args)
}

// apiServerReady polls /readyz as the admin: it turns 200 only after etcd is reachable
// and the post-start hooks (bootstrap RBAC roles, system namespaces, ...) have run.
func (e *Env) apiServerReady(ctx context.Context) error {
	return HTTPOK(e.adminHTTP, e.apiURL+"/readyz")(ctx)
}

// healthz polls a kube-controller-manager or kube-scheduler /healthz. They serve with
// the environment's serving certificate, so it is verified like any other, and
// /healthz is in their default --authorization-always-allow-paths.
func (e *Env) healthz(port int) func(context.Context) error {
	return HTTPOK(e.anonHTTP, "https://127.0.0.1:"+strconv.Itoa(port)+"/healthz")
}

// httpClients builds the admin client (for /readyz) and an anonymous one (for
// /healthz), both trusting only the environment's CA.
func (e *Env) httpClients() error {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(e.pki.CA) {
		return fmt.Errorf("testenv: bad CA certificate")
	}
	admin, err := tls.X509KeyPair(e.pki.AdminCert, e.pki.AdminKey)
	if err != nil {
		return err
	}
	client := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs, MinVersion: tls.VersionTLS12},
		}}
	}
	e.adminHTTP, e.anonHTTP = client(admin), client()
	return nil
}
