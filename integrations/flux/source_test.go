package flux

import (
	"testing"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"

	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// The repository of a proposal never carries user information, however the
// GitRepository URL or the OCI artifact's annotation spells it.
func TestProvenanceStripsUserInformation(t *testing.T) {
	git := func(url string) sourcev1.Source {
		return &sourcev1.GitRepository{Spec: sourcev1.GitRepositorySpec{URL: url}}
	}
	oci := &sourcev1.OCIRepository{}
	for _, tc := range []struct {
		name string
		src  sourcev1.Source
		meta map[string]string
		want string
	}{
		{"https token", git("https://x-access-token:SECRET@github.com/o/r.git"), nil, "https://github.com/o/r.git"},
		{"scp password", git("git:SECRET@github.com:o/r"), nil, "github.com:o/r"},
		{"ssh user", git("ssh://git:SECRET@github.com/o/r"), nil, "ssh://github.com/o/r"},
		{"ambiguous", git("https://a#SECRET@github.com/o/r"), nil, proposal.RedactedRepository},
		{"OCI source annotation", oci, map[string]string{ociSourceAnnotation: "https://SECRET@github.com/o/r?t=SECRET"}, "https://github.com/o/r"},
	} {
		repo, _ := provenance(tc.src, &meta.Artifact{Revision: "main@sha1:1", Metadata: tc.meta})
		if repo != tc.want {
			t.Errorf("%s: provenance repository = %q, want %q", tc.name, repo, tc.want)
		}
	}
}
