package githost

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"testing"
)

// AppTransports hands one transport per installation, API and key to every
// client built with it; nil (no sharing) a new one each time.
func TestAppTransports(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	app := &GitHubApp{AppID: 1, InstallationID: 2, PrivateKey: pemKey}
	get := func(a *AppTransports, api string, app *GitHubApp) any {
		t.Helper()
		tr, err := a.installation(api, app, nil)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}

	shared := &AppTransports{}
	first := get(shared, "https://api.github.com", app)
	if get(shared, "https://api.github.com", app) != first {
		t.Error("a second client of the same installation got a new transport: the installation token is not shared")
	}
	if get(shared, "http://127.0.0.1:1234/api/v3", app) == first {
		t.Error("another API got the first API's transport")
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rotated := &GitHubApp{AppID: 1, InstallationID: 2, PrivateKey: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(other)})}
	if get(shared, "https://api.github.com", rotated) == first {
		t.Error("a rotated key got the old key's transport")
	}
	if get(nil, "https://api.github.com", app) == get(nil, "https://api.github.com", app) {
		t.Error("without AppTransports two clients shared a transport")
	}
	if get((&AppTransports{}), "https://api.github.com", app) == first {
		t.Error("two AppTransports values shared a transport: the cache is not the value's own")
	}
}
