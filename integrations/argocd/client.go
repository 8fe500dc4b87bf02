package argocd

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
)

// maxResponseSize bounds what is read of one API answer; the StatefulSets
// of one application are far smaller.
const maxResponseSize = 32 << 20

// TokenSource yields the bearer token of each request.
type TokenSource interface {
	Token(ctx context.Context) (string, error)
}

// ClientOptions configure a Client.
type ClientOptions struct {
	// Server is argocd-server's base URL, e.g. https://argocd-server.argocd.svc.
	Server string
	// CAFile holds PEM certificates trusted besides the system's for Server.
	CAFile string
	// Insecure skips the verification of Server's certificate.
	Insecure bool
	// Plaintext allows an http:// Server, which sends the token unencrypted.
	Plaintext bool
	// Token authenticates every request; required.
	Token TokenSource
	// Timeout bounds one request; default DefaultTimeout.
	Timeout time.Duration
}

// Client calls the argocd-server REST API (what the argocd CLI calls
// through grpc-gateway). Every call names the Application's namespace
// (appNamespace), so Applications outside Argo CD's own namespace work when
// Argo CD allows them there.
type Client struct {
	server *url.URL
	http   *http.Client
	token  TokenSource
}

// DefaultTimeout bounds one argocd-server request when ClientOptions.Timeout is unset.
const DefaultTimeout = 30 * time.Second

func (o ClientOptions) withDefaults() ClientOptions {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

// NewClient checks o and builds a client.
func NewClient(o ClientOptions) (*Client, error) {
	o = o.withDefaults()
	u, err := url.Parse(o.Server)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("argocd server %q is not an http or https URL", o.Server)
	}
	if u.Scheme == "http" && !o.Plaintext {
		return nil, fmt.Errorf("argocd server %q is plain http, which sends the token unencrypted: allow it explicitly (plaintext)", o.Server)
	}
	if o.Token == nil {
		return nil, errors.New("argocd client: a token source is required")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.Insecure} //nolint:gosec // configured by the operator
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("argocd CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("argocd CA file %s holds no PEM certificate", o.CAFile)
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return &Client{server: u, http: &http.Client{Transport: tr, Timeout: o.Timeout}, token: o.Token}, nil
}

// APIError is an answer of argocd-server other than 2xx.
type APIError struct {
	Method, Path string
	StatusCode   int
	// Message is grpc-gateway's "message" field, or the body.
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("argocd %s %s: %d %s: %s", e.Method, e.Path, e.StatusCode, http.StatusText(e.StatusCode), e.Message)
}

// IsOperationInProgress reports whether err is argocd-server refusing a sync
// because another operation on the application has not finished.
func IsOperationInProgress(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && strings.Contains(ae.Message, "another operation is already in progress")
}

// ManagedStatefulSet is one StatefulSet an application manages: the object
// rendered from Git, or nil when Git no longer holds it (Argo CD would prune it).
type ManagedStatefulSet struct {
	Key    types.NamespacedName
	Target *appsv1.StatefulSet
}

// ManagedStatefulSets returns the StatefulSets app manages, each with its
// desired state from Argo CD's last comparison (GET
// /api/v1/applications/{name}/managed-resources). One request covers them all,
// which also tells which StatefulSets left the application.
func (c *Client) ManagedStatefulSets(ctx context.Context, app types.NamespacedName) ([]ManagedStatefulSet, error) {
	q := url.Values{"appNamespace": {app.Namespace}, "group": {"apps"}, "kind": {"StatefulSet"}}
	var body json.RawMessage
	if err := c.do(ctx, http.MethodGet, appPath(app.Name, "managed-resources"), q, nil, &body); err != nil {
		return nil, err
	}
	out, err := decodeManagedStatefulSets(body)
	if err != nil {
		return nil, fmt.Errorf("application %s: managed-resources: %w", app, err)
	}
	return out, nil
}

// SyncRequest is the body of POST /api/v1/applications/{name}/sync, as far as
// claimwarden fills it.
type SyncRequest struct {
	// Revision is the revision of a single-source application; empty syncs
	// spec.source.targetRevision (required when automated sync is on:
	// argocd-server refuses another revision then).
	Revision string `json:"revision,omitempty"`
	// Revisions and SourcePositions (1-based) pin the sources of a
	// multi-source application.
	Revisions       []string `json:"revisions,omitempty"`
	SourcePositions []int64  `json:"sourcePositions,omitempty"`
	Prune           bool     `json:"prune,omitempty"`
	// Infos are shown with the operation in Argo CD.
	Infos []Info `json:"infos,omitempty"`
}

// Info is a name and value shown with an operation.
type Info struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Sync starts a sync operation of app.
func (c *Client) Sync(ctx context.Context, app types.NamespacedName, req SyncRequest) error {
	body := struct {
		SyncRequest
		AppNamespace string `json:"appNamespace"`
	}{req, app.Namespace}
	return c.do(ctx, http.MethodPost, appPath(app.Name, "sync"), nil, body, nil)
}

// Refresh asks Argo CD to compare app with Git and the cluster again
// (refresh=normal; what the refresh annotation does, without write access
// to the Application).
func (c *Client) Refresh(ctx context.Context, app types.NamespacedName) error {
	q := url.Values{"appNamespace": {app.Namespace}, "refresh": {"normal"}}
	return c.do(ctx, http.MethodGet, appPath(app.Name, ""), q, nil, nil)
}

func appPath(name, sub string) string {
	p := "/api/v1/applications/" + url.PathEscape(name)
	if sub != "" {
		p += "/" + sub
	}
	return p
}

func (c *Client) do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	token, err := c.token.Token(ctx)
	if err != nil {
		return err
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	u := *c.server
	u.Path += path
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("argocd %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseSize))
	if err != nil {
		return fmt.Errorf("argocd %s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &APIError{Method: method, Path: path, StatusCode: resp.StatusCode, Message: errorMessage(data)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("argocd %s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

// errorMessage is grpc-gateway's error message, or the (shortened) body.
func errorMessage(body []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil && e.Message != "" {
		return e.Message
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 512 {
		s = s[:512] + "…"
	}
	return s
}
