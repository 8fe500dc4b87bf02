package gitea

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// The helpers talk to the REST API directly rather than through
// code.gitea.io/sdk/gitea: the few calls are short, and the module's go.mod stays
// free of a dependency used by one test package.

// APIError is a non-2xx answer of the REST API.
type APIError struct {
	Method, Path string
	StatusCode   int
	Body         string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("gitea: %s %s: %d %s: %s", e.Method, e.Path, e.StatusCode, http.StatusText(e.StatusCode), e.Body)
}

// API calls the REST API as User: path is relative to /api/v1 (e.g.
// "/repos/claimwarden/shop/statuses/<sha>"), in (if not nil) is sent as JSON,
// and a 2xx answer is decoded into out (if not nil). Other answers are *APIError.
func (s *Server) API(ctx context.Context, method, path string, in, out any) error {
	_, err := s.do(ctx, method, path, in, out)
	return err
}

func (s *Server) do(ctx context.Context, method, path string, in, out any) (http.Header, error) {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+"/api/v1"+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "token "+s.Token)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &APIError{Method: method, Path: path, StatusCode: resp.StatusCode, Body: strings.TrimSpace(string(data))}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return nil, fmt.Errorf("gitea: %s %s: decode %T: %w", method, path, out, err)
		}
	}
	return resp.Header, nil
}

// repoPath returns /repos/{owner}/{name} for repo, which is "name" (owned by
// User) or "owner/name".
func (s *Server) repoPath(repo string) (string, error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok {
		owner, name = s.User, repo
	}
	if owner == "" || name == "" || strings.Contains(name, "/") {
		return "", fmt.Errorf("gitea: bad repository %q: want name or owner/name", repo)
	}
	return "/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(name), nil
}

// CreateRepo creates an empty public repository name owned by User, with
// default branch main, and returns its HTTP clone URL
// (http://127.0.0.1:PORT/claimwarden/name.git).
func (s *Server) CreateRepo(ctx context.Context, name string) (cloneURL string, err error) {
	in := map[string]any{"name": name, "default_branch": "main", "private": false, "auto_init": false}
	var out struct {
		CloneURL string `json:"clone_url"`
	}
	if err := s.API(ctx, http.MethodPost, "/user/repos", in, &out); err != nil {
		return "", err
	}
	if out.CloneURL == "" {
		return "", errors.New("gitea: create repository: no clone_url in the answer")
	}
	return out.CloneURL, nil
}

// PushCommit commits files (path → content; created, or overwritten when they
// exist) as one commit on the default branch of repo ("name" or "owner/name"),
// through the contents API (no git client needed), and returns the commit SHA.
// It works on an empty repository too: the commit becomes the branch's first.
func (s *Server) PushCommit(ctx context.Context, repo string, files map[string]string, message string) (sha string, err error) {
	if len(files) == 0 {
		return "", errors.New("gitea: PushCommit: no files")
	}
	p, err := s.repoPath(repo)
	if err != nil {
		return "", err
	}
	type op struct {
		Operation string `json:"operation"`
		Path      string `json:"path"`
		Content   string `json:"content"`
	}
	in := struct {
		Message string `json:"message"`
		Files   []op   `json:"files"`
	}{Message: message}
	for path, content := range files {
		// "upload" is Gitea's create-or-update: unlike "update" it needs no blob SHA
		// of the file being replaced.
		in.Files = append(in.Files, op{"upload", path, base64.StdEncoding.EncodeToString([]byte(content))})
	}
	// Map order is random; a stable order keeps the request (and any failure) reproducible.
	sort.Slice(in.Files, func(i, j int) bool { return in.Files[i].Path < in.Files[j].Path })
	var out struct {
		Commit struct {
			SHA string `json:"sha"`
		} `json:"commit"`
	}
	if err := s.API(ctx, http.MethodPost, p+"/contents", in, &out); err != nil {
		return "", err
	}
	if out.Commit.SHA == "" {
		return "", errors.New("gitea: PushCommit: no commit sha in the answer")
	}
	return out.Commit.SHA, nil
}

// CommitStatus is one status as Gitea reports it (the latest for its context).
type CommitStatus struct {
	Context     string
	State       string
	Description string
	TargetURL   string
}

// CombinedStatus reads GET /repos/{owner}/{repo}/commits/{sha}/status: the
// combined state ("pending" when there is no status) and the latest status of
// each context. Gitea names a single status's state "status" where GitHub says
// "state"; CommitStatus.State holds it either way.
func (s *Server) CombinedStatus(ctx context.Context, repo, sha string) (state string, statuses []CommitStatus, err error) {
	p, err := s.repoPath(repo)
	if err != nil {
		return "", nil, err
	}
	var out struct {
		State    string `json:"state"`
		Statuses []struct {
			Status      string `json:"status"`
			State       string `json:"state"` // in case a later Gitea matches GitHub
			Context     string `json:"context"`
			Description string `json:"description"`
			TargetURL   string `json:"target_url"`
		} `json:"statuses"`
	}
	h, err := s.do(ctx, http.MethodGet, p+"/commits/"+url.PathEscape(sha)+"/status?limit="+strconv.Itoa(maxResponseItems), nil, &out)
	if err != nil {
		return "", nil, err
	}
	// Gitea combines only the statuses of the page it returns; one page must hold them all.
	if total, err := strconv.Atoi(h.Get("X-Total-Count")); err == nil && total > len(out.Statuses) {
		return "", nil, fmt.Errorf("gitea: %s has %d statuses, more than one page (%d): the combined state would be partial", sha, total, len(out.Statuses))
	}
	for _, st := range out.Statuses {
		cs := CommitStatus{Context: st.Context, State: st.Status, Description: st.Description, TargetURL: st.TargetURL}
		if cs.State == "" {
			cs.State = st.State
		}
		statuses = append(statuses, cs)
	}
	return out.State, statuses, nil
}
