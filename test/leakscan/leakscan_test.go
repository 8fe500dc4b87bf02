package leakscan

import (
	"encoding/base64"
	"net/url"
	"slices"
	"testing"
)

// A planted secret is found as written, URL-encoded and base64-encoded at
// every offset within a larger value; the text around it, a redacted form
// and a short prefix of it are not findings.
func TestFindsPlantedSecrets(t *testing.T) {
	const token = "ghp_s3cr3t/t0ken+with=chars"
	s := New()
	if err := s.Add("gitea token", token); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"clean", `{"msg":"posted","url":"http://claimwarden:xxxxx@127.0.0.1/shop.git"}`, nil},
		{"a prefix only", "ghp_s3cr3t", nil},
		{"as written", `"error":"401: bad credentials ` + token + `"`, []string{"gitea token"}},
		{"query-escaped", "GET /api?access_token=" + url.QueryEscape(token), []string{"gitea token (query-escaped)"}},
		{"path-escaped userinfo", "http://u:" + url.PathEscape(token) + "@host/r.git", []string{"gitea token (path-escaped)"}},
		{"basic auth", "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("claimwarden:"+token)), []string{"gitea token (base64)"}},
		{"base64 offset 1", base64.StdEncoding.EncodeToString([]byte("x" + token + "y")), []string{"gitea token (base64)"}},
		{"base64 offset 2", base64.StdEncoding.EncodeToString([]byte("xy" + token)), []string{"gitea token (base64)"}},
		{"base64url", base64.URLEncoding.EncodeToString([]byte("xyz" + token)), []string{"gitea token (base64)"}},
	} {
		if got := s.Find(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Find = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestRefusesShortSecrets(t *testing.T) {
	if err := New().Add("pin", "1234"); err == nil {
		t.Error("a 4-byte secret was accepted: it would match by chance")
	}
}
