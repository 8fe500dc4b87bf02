package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the throw-away public key infrastructure of one environment: a CA that signs
// the serving certificate (shared by the API server, kube-controller-manager and
// kube-scheduler, which all listen on 127.0.0.1) and the admin client certificate,
// plus the service-account signing key shared by the API server and the
// controller-manager. File paths are absolute.
type pki struct {
	CAFile, ServingCert, ServingKey, SAKey, SAPub string
	// CA, AdminCert and AdminKey are PEM, embedded in the admin rest.Config.
	CA, AdminCert, AdminKey []byte
}

// adminUser is the admin's name; the system:masters group is what makes it admin.
const adminUser = "claimwarden-testenv-admin"

// newPKI writes the certificates and keys under dir. ECDSA P-256 keys keep generation
// in the milliseconds; every Kubernetes component accepts them.
func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := template(pkix.Name{CommonName: "claimwarden-testenv-ca"})
	caTmpl.IsCA = true
	caTmpl.BasicConstraintsValid = true
	caTmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}

	serving := template(pkix.Name{CommonName: "kube-apiserver"})
	serving.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	// 10.0.0.1 is the first address of --service-cluster-ip-range, the in-cluster
	// "kubernetes" Service; the DNS names match it too, as on a real cluster.
	serving.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)}
	serving.DNSNames = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	servingCert, servingKey, err := sign(serving, ca, caKey)
	if err != nil {
		return nil, err
	}

	admin := template(pkix.Name{CommonName: adminUser, Organization: []string{"system:masters"}})
	admin.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	adminCert, adminKey, err := sign(admin, ca, caKey)
	if err != nil {
		return nil, err
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	saKeyPEM, err := keyPEM(saKey)
	if err != nil {
		return nil, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}

	p := &pki{
		CAFile:      filepath.Join(dir, "ca.crt"),
		ServingCert: filepath.Join(dir, "serving.crt"),
		ServingKey:  filepath.Join(dir, "serving.key"),
		SAKey:       filepath.Join(dir, "sa.key"),
		SAPub:       filepath.Join(dir, "sa.pub"),
		CA:          pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		AdminCert:   adminCert,
		AdminKey:    adminKey,
	}
	files := map[string][]byte{
		p.CAFile:      p.CA,
		p.ServingCert: servingCert,
		p.ServingKey:  servingKey,
		p.SAKey:       saKeyPEM,
		p.SAPub:       pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER}),
	}
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// template is a certificate valid from an hour ago (tolerates clock skew between the
// test and the components' view) for a week (longer than any test run).
func template(subject pkix.Name) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      subject,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
}

// sign issues tmpl with a fresh key, returning certificate and key as PEM.
func sign(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (certPEM, kPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	kPEM, err = keyPEM(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), kPEM, nil
}

func keyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}
