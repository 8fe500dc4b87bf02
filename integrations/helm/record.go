package helm

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/integrations/manifests"
)

// DefaultMaxReleaseBytes bounds a decoded release record unless configured:
// a crafted gzip stream in a Secret's 1 MiB would unpack to gigabytes.
// Measured: kube-prometheus-stack 88.5.3 (with its subcharts, default
// values) makes a record of 2.6 MiB unpacked, mostly its templates and the
// manifest, in 395 KiB of Secret data (8.9:1 gzip); a full Secret at that
// ratio is 6.7 MiB. The bound is six times the largest record measured and
// admits a full Secret compressing 16:1; decoding one at the bound peaks at
// 3.5 times its size (56 MiB), inside the Deployment's 512Mi.
const DefaultMaxReleaseBytes = 16 << 20

// releaseKey is the field of a release Secret holding the record.
const releaseKey = "release"

// gzipMagic starts a compressed record; Helm 2-era records are not compressed.
var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// SecretName is the Secret Helm's storage driver keeps release version v of
// release name in (Helm 3 and 4 alike).
func SecretName(name string, version int) string {
	return fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, version)
}

// ReadRelease reads release version v of name from its Secret in namespace
// ns. The record is decoded by hand rather than with Helm's storage driver:
// the driver's decoder is unexported and reads the gzip stream without a
// bound (whoever can write Secrets in the storage namespace could exhaust
// claimwarden's memory), and its package brings Helm's SQL driver along.
// Only what claimwarden uses of the record is decoded (decodeRelease).
func ReadRelease(ctx context.Context, r client.Reader, ns, name string, version int, maxBytes int64) (*Release, error) {
	key := types.NamespacedName{Namespace: ns, Name: SecretName(name, version)}
	var s corev1.Secret
	if err := r.Get(ctx, key, &s); err != nil {
		return nil, fmt.Errorf("release record Secret %s: %w", key, err)
	}
	if s.Type != "helm.sh/release.v1" {
		return nil, fmt.Errorf("release record Secret %s: type %q is not helm.sh/release.v1", key, s.Type)
	}
	rel, err := decodeRelease(s.Data[releaseKey], maxBytes)
	if err != nil {
		return nil, fmt.Errorf("release record Secret %s: data.%s: %w", key, releaseKey, err)
	}
	if rel.Name != name || rel.Version != version || rel.Namespace == "" {
		return nil, fmt.Errorf("release record Secret %s holds release %s/%s version %d, not %s version %d", key, rel.Namespace, rel.Name, rel.Version, name, version)
	}
	return rel, nil
}

// StatefulSets are the StatefulSets of a release's manifest as Helm applies
// them: in the release namespace where the manifest names none, with Helm's
// ownership metadata.
// The manifest is decoded with the manifests package's bounds.
func StatefulSets(rel *Release) ([]*appsv1.StatefulSet, error) {
	what := fmt.Sprintf("release %s/%s version %d", rel.Namespace, rel.Name, rel.Version)
	objs, err := manifests.Limits{}.Decode(strings.NewReader(rel.Manifest), what)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if o.GetNamespace() == "" {
			o.SetNamespace(rel.Namespace)
		}
	}
	stss, _, err := manifests.StatefulSets(objs)
	if err != nil {
		return nil, err
	}
	out := make([]*appsv1.StatefulSet, 0, len(stss))
	for _, s := range stss {
		withOwnership(s.StatefulSet, rel.Name, rel.Namespace)
		out = append(out, s.StatefulSet)
	}
	return out, nil
}
