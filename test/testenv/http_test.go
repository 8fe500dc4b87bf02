package testenv

import (
	"context"
	"strings"
	"testing"
)

// HTTPGet returns a 200's body, and for any other status an error naming the
// URL, the status and what the server said.
func TestHTTPGet(t *testing.T) {
	ctx := context.Background()
	body, err := HTTPGet(ctx, env.adminHTTP, env.apiURL+"/readyz")
	if err != nil || body != "ok" {
		t.Fatalf("/readyz as the admin: %q, %v; want ok", body, err)
	}
	url := env.apiURL + "/api/v1/secrets"
	_, err = HTTPGet(ctx, env.anonHTTP, url)
	if err == nil || !strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), "403 Forbidden") || !strings.Contains(err.Error(), `"reason":"Forbidden"`) {
		t.Fatalf("secrets anonymously: %v; want the URL, 403 Forbidden and the API server's Status", err)
	}
	if err := HTTPOK(env.anonHTTP, url)(ctx); err == nil {
		t.Fatal("HTTPOK: a 403 passed")
	}
}
