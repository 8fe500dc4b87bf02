package spokes

import (
	"encoding/base64"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/cert"
)

// secretToken is the credential of the test Secrets: no error may quote it.
const secretToken = "s3cr3t-token"

// testPair is a certificate and its key, PEM, generated once.
var testPair = sync.OnceValues(func() ([2][]byte, error) {
	c, k, err := cert.GenerateSelfSignedCertKey("spoke.example.com", nil, nil)
	return [2][]byte{c, k}, err
})

// pair returns testPair's certificate and key, base64 as a kubeconfig's
// *-data fields hold them.
func pair(t *testing.T) (certPEM, keyPEM []byte, certB64, keyB64 string) {
	t.Helper()
	p, err := testPair()
	if err != nil {
		t.Fatal(err)
	}
	return p[0], p[1], base64.StdEncoding.EncodeToString(p[0]), base64.StdEncoding.EncodeToString(p[1])
}

// secret is Secret ns/name holding data.
func secret(ns, name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}
