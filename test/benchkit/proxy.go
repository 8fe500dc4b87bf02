package benchkit

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"

	"k8s.io/client-go/rest"
)

// NewReverseProxy forwards every request to upstream's host through a
// transport built from upstream: its CA, and its credential if it carries
// one (else the client's Authorization header passes through).
func NewReverseProxy(upstream *rest.Config) (*httputil.ReverseProxy, error) {
	target, err := url.Parse(upstream.Host)
	if err != nil {
		return nil, fmt.Errorf("proxy: upstream %q: %w", upstream.Host, err)
	}
	transport, err := rest.TransportFor(upstream)
	if err != nil {
		return nil, fmt.Errorf("proxy: upstream transport: %w", err)
	}
	return &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: transport,
		// Watches stream; every event must reach the controller at once.
		FlushInterval: -1,
		// A controller going away mid-watch is normal; anything else shows up
		// as the controller's own errors, so the proxy only answers 502.
		ErrorLog: log.New(io.Discard, "", 0),
	}, nil
}

// StatusWriter remembers the response code. Unwrap lets the reverse proxy
// reach the underlying writer's Flush, which watches need.
type StatusWriter struct {
	http.ResponseWriter
	// Code is the status sent: 200, as net/http sends, until WriteHeader.
	Code int
}

// NewStatusWriter wraps w.
func NewStatusWriter(w http.ResponseWriter) *StatusWriter {
	return &StatusWriter{ResponseWriter: w, Code: http.StatusOK}
}

// WriteHeader remembers code and sends it.
func (w *StatusWriter) WriteHeader(code int) {
	w.Code = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap is the wrapped writer, for http.ResponseController.
func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// IsWatch: a request with watch=true (or 1), as client-go's reflectors send.
func IsWatch(u *url.URL) bool {
	w := u.Query().Get("watch")
	return w == "true" || w == "1"
}
