package prcomment

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	gitlab "gitlab.com/gitlab-org/api/client-go"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// gitlabMaxBody is GitLab's limit on a note (Note::MAX_NOTE_LENGTH,
// 1,000,000 characters).
const gitlabMaxBody = 1_000_000

// gitlabPerPage is the largest page GitLab serves.
const gitlabPerPage = 100

// gitlabAPI keeps a merge request's note: GET and POST
// projects/{id}/merge_requests/{iid}/notes, PUT .../notes/{note_id}, the
// project ID being the URL-encoded full path (group%2Fsub%2Fname), so
// subgroups need no project-ID lookup.
type gitlabAPI struct {
	client *gitlab.Client
	token  string
	web    string // the instance's web URL, for a note's link
}

func newGitLab(h githost.Host, clients githost.Clients) (*gitlabAPI, error) {
	client, err := clients.GitLab(h)
	if err != nil {
		return nil, err
	}
	return &gitlabAPI{client: client, token: h.Token, web: strings.TrimRight(h.URL, "/")}, nil
}

func (a *gitlabAPI) describe(repo githost.Repository, number int) string {
	return fmt.Sprintf("merge request %s/%s!%d", repo.Host, repo.Path, number)
}

func (a *gitlabAPI) maxBody() (int, string) { return gitlabMaxBody, "GitLab" }

// list asks for the oldest first: GitLab's default is the newest first.
// System notes ("added 1 commit") are GitLab's, never a check's.
func (a *gitlabAPI) list(ctx context.Context, path string, number int) ([]comment, error) {
	var out []comment
	opt := &gitlab.ListMergeRequestNotesOptions{
		ListOptions: gitlab.ListOptions{PerPage: gitlabPerPage},
		OrderBy:     gitlab.Ptr("created_at"),
		Sort:        gitlab.Ptr("asc"),
	}
	for page := int64(1); ; {
		notes, resp, err := a.client.Notes.ListMergeRequestNotes(path, int64(number), opt, gitlab.WithContext(ctx))
		if err != nil {
			op := fmt.Sprintf("gitlab: GET projects/%s/merge_requests/%d/notes (page %d)", gitlab.PathEscape(path), number, page)
			return nil, githost.GitLabError(op, resp, err, a.token)
		}
		for _, n := range notes {
			if !n.System {
				out = append(out, a.comment(path, number, n))
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		if resp.NextPage <= page {
			return nil, fmt.Errorf("gitlab: GET projects/%s/merge_requests/%d/notes: page %d links to page %d as the next", gitlab.PathEscape(path), number, page, resp.NextPage)
		}
		page, opt.Page = resp.NextPage, resp.NextPage
	}
}

// self is GET /user, which every token that may write notes can read
// (project and group access tokens act as bot users); a refusal leaves the
// identity unknown.
func (a *gitlabAPI) self(ctx context.Context) (identity, error) {
	u, resp, err := a.client.Users.CurrentUser(gitlab.WithContext(ctx))
	if err != nil {
		if resp != nil && resp.Response != nil && (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound) {
			return identity{}, nil
		}
		return identity{}, githost.GitLabError("gitlab: GET user", resp, err, a.token)
	}
	return identity{known: true, userID: u.ID}, nil
}

func (a *gitlabAPI) create(ctx context.Context, path string, number int, body string) (comment, error) {
	n, resp, err := a.client.Notes.CreateMergeRequestNote(path, int64(number),
		&gitlab.CreateMergeRequestNoteOptions{Body: gitlab.Ptr(body)}, gitlab.WithContext(ctx))
	if err != nil {
		op := fmt.Sprintf("gitlab: POST projects/%s/merge_requests/%d/notes", gitlab.PathEscape(path), number)
		return comment{}, githost.GitLabError(op, resp, err, a.token)
	}
	return a.comment(path, number, n), nil
}

func (a *gitlabAPI) edit(ctx context.Context, path string, number int, old comment, body string) (comment, error) {
	n, resp, err := a.client.Notes.UpdateMergeRequestNote(path, int64(number), old.id,
		&gitlab.UpdateMergeRequestNoteOptions{Body: gitlab.Ptr(body)}, gitlab.WithContext(ctx))
	if err != nil {
		op := fmt.Sprintf("gitlab: PUT projects/%s/merge_requests/%d/notes/%d", gitlab.PathEscape(path), number, old.id)
		return comment{}, githost.GitLabError(op, resp, err, a.token)
	}
	return a.comment(path, number, n), nil
}

// comment links a note by its anchor on the merge request's page: the API
// returns no web URL for a note.
func (a *gitlabAPI) comment(path string, number int, n *gitlab.Note) comment {
	return comment{
		id:     n.ID,
		body:   n.Body,
		userID: n.Author.ID,
		url:    fmt.Sprintf("%s/%s/-/merge_requests/%d#note_%d", a.web, path, number, n.ID),
	}
}
