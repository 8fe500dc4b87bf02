package argoenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// APIError is an argocd-server answer other than 2xx.
type APIError struct {
	Method, Path string
	StatusCode   int
	Body         string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("argocd %s %s: %d: %s", e.Method, e.Path, e.StatusCode, e.Body)
}

// Token logs in as AdminUser (POST /api/v1/session) and returns a new bearer token.
func (a *ArgoCD) Token(ctx context.Context) (string, error) {
	in := map[string]string{"username": AdminUser, "password": a.AdminPassword}
	var out struct {
		Token string `json:"token"`
	}
	if err := a.do(ctx, "", http.MethodPost, "/api/v1/session", in, &out); err != nil {
		return "", err
	}
	if out.Token == "" {
		return "", errors.New("argocd POST /api/v1/session: no token in the answer")
	}
	return out.Token, nil
}

// API calls argocd-server's REST API as AdminUser: path is absolute
// ("/api/v1/applications/shop"), in (if not nil) is sent as JSON and out (if not
// nil) decoded from the answer. The admin token is fetched once and reused.
func (a *ArgoCD) API(ctx context.Context, method, path string, in, out any) error {
	token, err := a.adminToken(ctx)
	if err != nil {
		return err
	}
	return a.do(ctx, token, method, path, in, out)
}

func (a *ArgoCD) adminToken(ctx context.Context) (string, error) {
	a.tokenMu.Lock()
	defer a.tokenMu.Unlock()
	if a.token == "" {
		t, err := a.Token(ctx)
		if err != nil {
			return "", err
		}
		a.token = t
	}
	return a.token, nil
}

func (a *ArgoCD) do(ctx context.Context, token, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.ServerURL+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return &APIError{Method: method, Path: path, StatusCode: resp.StatusCode, Body: string(data)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("argocd %s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// ManagedResource is one entry of an Application's managed resources: the object
// as Argo CD would apply it from Git (Target) and as it is in the cluster (Live);
// either is nil when absent.
type ManagedResource struct {
	Target, Live *unstructured.Unstructured
	// Modified is Argo CD's verdict that Live differs from Target.
	Modified bool
}

// ManagedResource asks argocd-server for one resource of Application app
// (GET /api/v1/applications/{app}/managed-resources), as the claimwarden Argo CD
// integration reads the desired state. group is "" for the core API group.
func (a *ArgoCD) ManagedResource(ctx context.Context, app, group, kind, namespace, name string) (*ManagedResource, error) {
	q := url.Values{"group": {group}, "kind": {kind}, "namespace": {namespace}, "name": {name}}
	path := "/api/v1/applications/" + url.PathEscape(app) + "/managed-resources?" + q.Encode()
	// The states are JSON documents inside JSON strings.
	var out struct {
		Items []struct {
			TargetState string `json:"targetState"`
			LiveState   string `json:"liveState"`
			Modified    bool   `json:"modified"`
		} `json:"items"`
	}
	if err := a.API(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	if len(out.Items) != 1 {
		return nil, fmt.Errorf("argocd GET %s: %d items, want 1", path, len(out.Items))
	}
	it := out.Items[0]
	r := &ManagedResource{Modified: it.Modified}
	var err error
	if r.Target, err = decodeState(it.TargetState); err != nil {
		return nil, fmt.Errorf("argocd GET %s: targetState: %w", path, err)
	}
	if r.Live, err = decodeState(it.LiveState); err != nil {
		return nil, fmt.Errorf("argocd GET %s: liveState: %w", path, err)
	}
	return r, nil
}

// decodeState parses one state string; Argo CD sends "" or "null" for none.
func decodeState(s string) (*unstructured.Unstructured, error) {
	if s == "" || s == "null" {
		return nil, nil
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(s), &u.Object); err != nil {
		return nil, err
	}
	return u, nil
}
