package flux

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/tar"
	"github.com/opencontainers/go-digest"
)

// artifactServer plays source-controller's artifact storage: it serves
// tarballs over plain HTTP, as source-controller does in-cluster, and counts
// the requests per path.
type artifactServer struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
	hits  map[string]int
}

func newArtifactServer(t testing.TB) *artifactServer {
	t.Helper()
	s := &artifactServer{files: map[string][]byte{}, hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		data, ok := s.files[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(s.Close)
	return s
}

// serveDir tars dir the way source-controller packs artifacts and returns
// the artifact status pointing at it.
func (s *artifactServer) serveDir(t testing.TB, path, dir string) *meta.Artifact {
	t.Helper()
	var buf bytes.Buffer
	if _, err := tar.Tar(dir, &buf); err != nil {
		t.Fatal(err)
	}
	return s.serve(path, buf.Bytes())
}

func (s *artifactServer) serve(path string, data []byte) *meta.Artifact {
	s.mu.Lock()
	s.files[path] = data
	s.mu.Unlock()
	size := int64(len(data))
	return &meta.Artifact{
		URL:      s.URL + path,
		Path:     path,
		Digest:   digest.FromBytes(data).String(),
		Revision: "main@sha1:0123456789abcdef0123456789abcdef01234567",
		Size:     &size,
	}
}

func (s *artifactServer) requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}
