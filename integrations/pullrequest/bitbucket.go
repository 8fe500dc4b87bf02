package pullrequest

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"

	"github.com/claimwarden/claimwarden/integrations/githost"
)

// maxPagesListed bounds the pages of a directory listed.
const maxPagesListed = 40

// bitbucketHTTP is one Bitbucket API (githost.Bitbucket: requests and the
// classification of refusals) and the cache of who its token is.
type bitbucketHTTP struct {
	githost.Bitbucket
	ids *Identities
}

// raw GETs a file's content, bounded by readBounded; 404 wraps ErrNotFound.
func (b *bitbucketHTTP) raw(ctx context.Context, path string) ([]byte, error) {
	op := b.Op(http.MethodGet, path)
	resp, data, err := b.Send(ctx, http.MethodGet, path, "", nil, MaxFileBytes)
	switch {
	case err != nil:
		return nil, err
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%s: %w", op, ErrNotFound)
	case resp.StatusCode/100 != 2:
		return nil, b.Refused(op, resp, data, nil)
	}
	return readBounded(bytes.NewReader(data), op)
}

// multipartForm encodes fields (name, value pairs, in order) as
// multipart/form-data, returning the body and its content type.
func multipartForm(fields [][2]string) ([]byte, string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := w.WriteField(f[0], f[1]); err != nil {
			return nil, "", err
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}
