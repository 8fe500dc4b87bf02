package rollout_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/converge"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// The journal answers from what its own last write returned while the
// cache lags that write, with no request to the API server; from the cache
// once it shows our write or another writer's newer one; and a journal that
// wrote nothing (a restarted process, a new leader) still asks the API
// server. No StatefulSet exists for the key, so every state is one of a
// re-create's. The records are unsealed: the shared controller, which sees
// them too, refuses them and creates nothing.
func TestJournalAnswersItsOwnWritesUnread(t *testing.T) {
	c := started(t)
	ctx := context.Background()
	key := types.NamespacedName{Namespace: namespace(t, c), Name: "memo"}
	created := &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := c.Create(ctx, created); err != nil {
		t.Fatal(err)
	}
	waitCached(t, key, created.ResourceVersion)
	cache := &laggingCache{Reader: controllerCache}
	api := &countingReader{Reader: c}
	journal := rollout.NewJournal(readingFrom{Client: c, reader: cache}, api)
	loads := func(j converge.Journal, why, want string, reads int64) {
		t.Helper()
		before := api.reads.Load()
		rec, err := j.Load(ctx, key)
		if err != nil {
			t.Fatalf("%s: %v", why, err)
		}
		if got, n := uidOf(rec), api.reads.Load()-before; got != want || n != reads {
			t.Errorf("%s: Load = %q with %d uncached reads, want %q with %d", why, got, n, want, reads)
		}
	}

	save(t, journal, key, "ours")
	cache.serve(created)
	loads(journal, "our record, the cache behind it", "ours", 0)
	cache.serve(nil)
	loads(journal, "our record, not in the cache yet", "ours", 0)
	if n := api.reads.Load(); n != 0 {
		t.Errorf("%d uncached reads for our own Save and its Loads, want 0", n)
	}

	withRecord := serverCopy(t, c, key)
	if err := journal.Clear(ctx, key); err != nil {
		t.Fatal(err)
	}
	cache.serve(withRecord)
	loads(journal, "our clearing, the cache behind it", "", 0)
	cache.follow()
	waitCached(t, key, serverCopy(t, c, key).ResourceVersion)
	loads(journal, "our clearing, in the cache", "", 0)
	// That Load saw the cache caught up and forgot the write.
	cache.serve(withRecord)
	loads(journal, "a stale record, our clearing forgotten", "", 1)

	cache.follow()
	save(t, journal, key, "ours-again")
	theirs := created.DeepCopy()
	patch := client.RawPatch(types.MergePatchType, []byte(`{"status":{"pendingRecreate":{"uid":"theirs","object":{}}}}`))
	if err := c.Status().Patch(ctx, theirs, patch); err != nil {
		t.Fatal(err)
	}
	waitCached(t, key, theirs.ResourceVersion)
	loads(journal, "another writer's record in the cache", "theirs", 0)

	// Our last write is the newer base, but the server has theirs.
	cache.serve(created)
	before := api.reads.Load()
	save(t, journal, key, "ours-last")
	if api.reads.Load() == before {
		t.Error("Save over another writer's record read nothing from the API server after its conflict")
	}
	if got := uidOf(serverCopy(t, c, key).Status.PendingRecreate); got != "ours-last" {
		t.Errorf("record on the server after Save: %q, want ours-last", got)
	}

	cache.follow()
	fresh := rollout.NewJournal(readingFrom{Client: c, reader: cache}, api)
	loads(fresh, "a journal that wrote nothing", "ours-last", 1)
}

// save records a re-create of key, with the old object's UID uid.
func save(t *testing.T, j converge.Journal, key types.NamespacedName, uid string) {
	t.Helper()
	rec := v1alpha1.PendingRecreate{UID: uid, Object: runtime.RawExtension{Raw: []byte(`{}`)}}
	if err := j.Save(context.Background(), key, rec); err != nil {
		t.Fatalf("saving %s: %v", uid, err)
	}
}

func uidOf(rec *v1alpha1.PendingRecreate) string {
	if rec == nil {
		return ""
	}
	return rec.UID
}

// serverCopy reads the VolumeClaimRollout of key from the API server.
func serverCopy(t *testing.T, c client.Client, key types.NamespacedName) *v1alpha1.VolumeClaimRollout {
	t.Helper()
	vcr := &v1alpha1.VolumeClaimRollout{}
	if err := c.Get(context.Background(), key, vcr); err != nil {
		t.Fatal(err)
	}
	return vcr
}

// waitCached waits until the controller's cache holds the
// VolumeClaimRollout of key at resourceVersion rv or newer.
func waitCached(t *testing.T, key types.NamespacedName, rv string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), fixtures.Poll, timeout, true, func(ctx context.Context) (bool, error) {
		var vcr v1alpha1.VolumeClaimRollout
		if err := controllerCache.Get(ctx, key, &vcr); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		cmp, err := resourceversion.CompareResourceVersion(vcr.ResourceVersion, rv)
		return cmp >= 0, err
	})
	if err != nil {
		t.Fatalf("the cache never showed VolumeClaimRollout %s at version %s: %v", key, rv, err)
	}
}

// laggingCache serves the cache's copies, except, when told, a fixed stale
// copy of the VolumeClaimRollout (nil: not in the cache yet).
type laggingCache struct {
	client.Reader
	mu      sync.Mutex
	lagging bool
	stale   *v1alpha1.VolumeClaimRollout
}

func (l *laggingCache) serve(stale *v1alpha1.VolumeClaimRollout) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lagging, l.stale = true, stale
}

// follow serves the cache's copies again.
func (l *laggingCache) follow() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lagging, l.stale = false, nil
}

func (l *laggingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	l.mu.Lock()
	lagging, stale := l.lagging, l.stale
	l.mu.Unlock()
	vcr, ok := obj.(*v1alpha1.VolumeClaimRollout)
	switch {
	case !ok || !lagging:
		return l.Reader.Get(ctx, key, obj, opts...)
	case stale == nil:
		return apierrors.NewNotFound(v1alpha1.GroupVersion.WithResource("volumeclaimrollouts").GroupResource(), key.Name)
	}
	stale.DeepCopyInto(vcr)
	return nil
}

// readingFrom is a client that writes to the API server and reads from reader.
type readingFrom struct {
	client.Client
	reader client.Reader
}

func (c readingFrom) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.reader.Get(ctx, key, obj, opts...)
}

// countingReader counts the reads it passes to the API server.
type countingReader struct {
	client.Reader
	reads atomic.Int64
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.reads.Add(1)
	return r.Reader.Get(ctx, key, obj, opts...)
}
