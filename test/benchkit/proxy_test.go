package benchkit

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"k8s.io/client-go/rest"
)

// TestStatusWriter: the code sent is remembered (200 unless set), and the
// Flush a watch needs reaches the wrapped writer.
func TestStatusWriter(t *testing.T) {
	rec := httptest.NewRecorder()
	sw := NewStatusWriter(rec)
	if sw.Code != http.StatusOK {
		t.Errorf("Code before WriteHeader = %d, want 200", sw.Code)
	}
	sw.WriteHeader(http.StatusConflict)
	if sw.Code != http.StatusConflict || rec.Code != http.StatusConflict {
		t.Errorf("after WriteHeader(409): remembered %d, sent %d", sw.Code, rec.Code)
	}
	if err := http.NewResponseController(sw).Flush(); err != nil || !rec.Flushed {
		t.Errorf("Flush through the StatusWriter: %v, flushed %v", err, rec.Flushed)
	}
}

func TestIsWatch(t *testing.T) {
	for raw, want := range map[string]bool{
		"/api/v1/pods?watch=true": true, "/apis/apps/v1/statefulsets?watch=1&allowWatchBookmarks=true": true,
		"/api/v1/pods?watch=false": false, "/api/v1/pods": false,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := IsWatch(u); got != want {
			t.Errorf("IsWatch(%s) = %v, want %v", raw, got, want)
		}
	}
}

func TestNewReverseProxyRefusesABadHost(t *testing.T) {
	if _, err := NewReverseProxy(&rest.Config{Host: "https://[::1"}); err == nil {
		t.Error("an upstream host that is no URL was accepted")
	}
}
