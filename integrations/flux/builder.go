package flux

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultKeptBuilds is how many build results a Builder keeps by default.
const DefaultKeptBuilds = 64

// Builder builds Kustomizations from their source artifacts and caches the
// results by artifact digest, Kustomization UID and generation, and the
// resolved postBuild variables: when none of those changed, nothing is
// fetched or built again. Only the substituteFrom ConfigMaps and Secrets are
// read on every call (through Reader, normally a cached client). Safe for
// concurrent use; set the fields before the first Build.
type Builder struct {
	Fetcher *Fetcher
	// Reader resolves postBuild.substituteFrom.
	Reader client.Reader
	// Keep is how many results are cached (0: DefaultKeptBuilds).
	Keep int
	// StrictSubstitutions, AllowRemoteBases and Limits are as in BuildOptions.
	StrictSubstitutions bool
	AllowRemoteBases    bool
	Limits              Limits

	once    sync.Once
	results *lru.Cache[string, *Result]
	group   singleflight.Group
	builds  atomic.Int64 // builds run, for tests
}

// Build returns the build of ks from the artifact its source serves. The
// Result is the caller's to modify.
func (b *Builder) Build(ctx context.Context, ks *kustomizev1.Kustomization, a *meta.Artifact) (*Result, error) {
	if ks == nil {
		return nil, errors.New("flux.Builder: no Kustomization")
	}
	if a == nil {
		return nil, errors.New(subject(ks) + ": its source has no artifact yet")
	}
	if b.Fetcher == nil {
		return nil, errors.New("flux.Builder: no Fetcher")
	}
	b.once.Do(func() {
		keep := b.Keep
		if keep <= 0 {
			keep = DefaultKeptBuilds
		}
		b.results, _ = lru.New[string, *Result](keep) // errors only for keep <= 0
	})
	vars, err := resolveVariables(ctx, ks, b.Reader)
	if err != nil {
		return nil, err
	}
	key := buildKey(ks, a, vars)
	if r, ok := b.results.Get(key); ok {
		return r.DeepCopy(), nil
	}
	v, err, _ := b.group.Do(key, func() (any, error) {
		if r, ok := b.results.Get(key); ok {
			return r, nil
		}
		dir, release, err := b.Fetcher.Acquire(ctx, a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", subject(ks), err)
		}
		defer release()
		b.builds.Add(1)
		r, err := build(ctx, dir, BuildOptions{
			Kustomization:       ks,
			StrictSubstitutions: b.StrictSubstitutions,
			AllowRemoteBases:    b.AllowRemoteBases,
			Limits:              b.Limits,
		}, vars)
		if err != nil {
			return nil, err
		}
		b.results.Add(key, r)
		return r, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Result).DeepCopy(), nil
}

func buildKey(ks *kustomizev1.Kustomization, a *meta.Artifact, vars map[string]string) string {
	h := varsHash(vars)
	return a.Digest + "|" + ks.Namespace + "/" + ks.Name + "|" + string(ks.UID) + "|" +
		strconv.FormatInt(ks.Generation, 10) + "|" + hex.EncodeToString(h[:])
}
