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
	return s.doAs(ctx, func(r *http.Request) { r.Header.Set("Authorization", "token "+s.Token) }, method, path, in, out)
}

// doAs is do with the request authenticated by auth.
func (s *Server) doAs(ctx context.Context, auth func(*http.Request), method, path string, in, out any) (http.Header, error) {
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
	auth(req)
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
	return s.PushCommitTo(ctx, repo, "", files, message)
}

// PushCommitTo is PushCommit onto branch, which must exist ("" is the
// default branch).
func (s *Server) PushCommitTo(ctx context.Context, repo, branch string, files map[string]string, message string) (sha string, err error) {
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
		Branch  string `json:"branch,omitempty"`
		Files   []op   `json:"files"`
	}{Message: message, Branch: branch}
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

// Statuses reads GET /repos/{owner}/{repo}/statuses/{sha}: every status
// posted on the commit, oldest first (CombinedStatus keeps only the latest
// per context), to tell how often each state was said.
func (s *Server) Statuses(ctx context.Context, repo, sha string) ([]CommitStatus, error) {
	p, err := s.repoPath(repo)
	if err != nil {
		return nil, err
	}
	var out []struct {
		ID          int64  `json:"id"`
		Status      string `json:"status"`
		State       string `json:"state"`
		Context     string `json:"context"`
		Description string `json:"description"`
		TargetURL   string `json:"target_url"`
	}
	h, err := s.do(ctx, http.MethodGet, p+"/statuses/"+url.PathEscape(sha)+"?sort=oldest&limit="+strconv.Itoa(maxResponseItems), nil, &out)
	if err != nil {
		return nil, err
	}
	if total, err := strconv.Atoi(h.Get("X-Total-Count")); err == nil && total > len(out) {
		return nil, fmt.Errorf("gitea: %s has %d statuses, more than one page (%d)", sha, total, len(out))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	statuses := make([]CommitStatus, 0, len(out))
	for _, st := range out {
		cs := CommitStatus{Context: st.Context, State: st.Status, Description: st.Description, TargetURL: st.TargetURL}
		if cs.State == "" {
			cs.State = st.State
		}
		statuses = append(statuses, cs)
	}
	return statuses, nil
}

// CreateBranch creates branch name in repo from the branch (or tag, or
// commit) from.
func (s *Server) CreateBranch(ctx context.Context, repo, name, from string) error {
	p, err := s.repoPath(repo)
	if err != nil {
		return err
	}
	return s.API(ctx, http.MethodPost, p+"/branches", map[string]string{"new_branch_name": name, "old_ref_name": from}, nil)
}

// CreatePullRequest opens a pull request in repo merging branch head into
// base, and returns its number (its issue index: pull requests and issues
// share the numbering, and a pull request's comments are its issue's).
func (s *Server) CreatePullRequest(ctx context.Context, repo, head, base, title string) (number int, err error) {
	p, err := s.repoPath(repo)
	if err != nil {
		return 0, err
	}
	var out struct {
		Number int `json:"number"`
	}
	if err := s.API(ctx, http.MethodPost, p+"/pulls", map[string]string{"head": head, "base": base, "title": title}, &out); err != nil {
		return 0, err
	}
	if out.Number == 0 {
		return 0, errors.New("gitea: CreatePullRequest: no number in the answer")
	}
	return out.Number, nil
}

// Comment is one comment on an issue or pull request.
type Comment struct {
	ID   int64
	Body string
	// User is the author's login.
	User string
}

// IssueComments reads the comments of issue or pull request number of repo,
// oldest first: GET /repos/{owner}/{repo}/issues/{number}/comments, which
// Gitea 1.26 answers with all of them at once (X-Total-Count says how many;
// a shorter answer fails).
func (s *Server) IssueComments(ctx context.Context, repo string, number int) ([]Comment, error) {
	p, err := s.repoPath(repo)
	if err != nil {
		return nil, err
	}
	var out []struct {
		ID   int64  `json:"id"`
		Body string `json:"body"`
		User struct {
			Login string `json:"login"`
		} `json:"user"`
	}
	h, err := s.do(ctx, http.MethodGet, p+"/issues/"+strconv.Itoa(number)+"/comments", nil, &out)
	if err != nil {
		return nil, err
	}
	if total, err := strconv.Atoi(h.Get("X-Total-Count")); err == nil && total > len(out) {
		return nil, fmt.Errorf("gitea: issue %d has %d comments, the answer only %d", number, total, len(out))
	}
	comments := make([]Comment, 0, len(out))
	for _, c := range out {
		comments = append(comments, Comment{ID: c.ID, Body: c.Body, User: c.User.Login})
	}
	return comments, nil
}

// CreateToken creates an access token of User with the given scopes (e.g.
// "write:issue", "read:repository"), authenticating with User's password as
// Gitea requires for this endpoint, and returns it.
func (s *Server) CreateToken(ctx context.Context, name string, scopes ...string) (string, error) {
	var out struct {
		SHA1 string `json:"sha1"`
	}
	basic := func(r *http.Request) { r.SetBasicAuth(s.User, s.Password) }
	in := map[string]any{"name": name, "scopes": scopes}
	if _, err := s.doAs(ctx, basic, http.MethodPost, "/users/"+url.PathEscape(s.User)+"/tokens", in, &out); err != nil {
		return "", err
	}
	if out.SHA1 == "" {
		return "", errors.New("gitea: CreateToken: no token in the answer")
	}
	return out.SHA1, nil
}

// AllStatuses reads every status of every commit of every repository User
// owns, by "repository@sha": what a run posted, to check it as a whole.
func (s *Server) AllStatuses(ctx context.Context) (map[string][]CommitStatus, error) {
	var repos []struct {
		Name string `json:"name"`
	}
	if err := s.pageAll(ctx, "/user/repos?limit="+strconv.Itoa(maxResponseItems), &repos); err != nil {
		return nil, err
	}
	out := map[string][]CommitStatus{}
	for _, r := range repos {
		p, err := s.repoPath(r.Name)
		if err != nil {
			return nil, err
		}
		var commits []struct {
			SHA string `json:"sha"`
		}
		err = s.pageAll(ctx, p+"/commits?stat=false&verification=false&files=false&limit="+strconv.Itoa(maxResponseItems), &commits)
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusConflict {
			continue // an empty repository: "Git Repository is empty"
		}
		if err != nil {
			return nil, err
		}
		for _, c := range commits {
			st, err := s.Statuses(ctx, r.Name, c.SHA)
			if err != nil {
				return nil, err
			}
			out[r.Name+"@"+c.SHA] = st
		}
	}
	return out, nil
}

// pageAll GETs every page of path (which has a query) into out, a slice:
// some lists (commits) are cut at 50 items per page whatever the limit.
func (s *Server) pageAll(ctx context.Context, path string, out any) error {
	var all []json.RawMessage
	for page := 1; ; page++ {
		var raw []json.RawMessage
		h, err := s.do(ctx, http.MethodGet, path+"&page="+strconv.Itoa(page), nil, &raw)
		if err != nil {
			return err
		}
		all = append(all, raw...)
		total, err := strconv.Atoi(h.Get("X-Total-Count"))
		if len(raw) == 0 || err != nil || len(all) >= total {
			break
		}
	}
	data, err := json.Marshal(all)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// PushChart uploads a packaged chart (a .tgz) to User's Helm repository in
// Gitea's package registry and returns the repository's URL.
func (s *Server) PushChart(ctx context.Context, tgz []byte) (string, error) {
	repo := s.URL + "/api/packages/" + s.User + "/helm"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, repo+"/api/charts", bytes.NewReader(tgz))
	if err != nil {
		return "", err
	}
	req.SetBasicAuth(s.User, s.Token)
	resp, err := s.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return "", &APIError{Method: req.Method, Path: req.URL.Path, StatusCode: resp.StatusCode, Body: strings.TrimSpace(string(body))}
	}
	return repo, nil
}
