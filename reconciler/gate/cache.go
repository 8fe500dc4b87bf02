package gate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/claimwarden/claimwarden/policies"
)

// Defaults of CacheOptions.
const (
	// DefaultRecheck is how long a denial stands before it is asked again.
	DefaultRecheck = time.Minute
	// DefaultCacheSize bounds the verdicts kept: a few per claim of a
	// large cluster.
	DefaultCacheSize = 50_000
)

// CacheOptions tune a Cache.
type CacheOptions struct {
	// Recheck is how long a denial stands before the policies are asked
	// again although nothing changed: a policy may read the clock (no
	// changes outside business hours), and its denial must not outlive the
	// reason. Allowed verdicts stand until the input or revision changes.
	Recheck time.Duration
	// Size bounds the verdicts kept; the least recently used go first.
	Size int
}

func (o CacheOptions) withDefaults() CacheOptions {
	if o.Recheck <= 0 {
		o.Recheck = DefaultRecheck
	}
	if o.Size <= 0 {
		o.Size = DefaultCacheSize
	}
	return o
}

// Cache is a policies.Evaluator that remembers the verdicts of another by
// StatefulSet, subject (the claim, "" for the StatefulSet-level change),
// input digest and policy revision: a claim is evaluated (and its decision
// logged) once per proposal, claim state and policy set, never again on
// unrelated reconciles. Superseded digests and revisions are never asked
// for again and age out of the LRU. Safe for concurrent use.
type Cache struct {
	next     policies.Evaluator
	recheck  time.Duration
	verdicts *lru.Cache[string, cachedVerdict]
	now      func() time.Time
}

type cachedVerdict struct {
	v  policies.Verdict
	at time.Time
}

// NewCache caches the verdicts of next.
func NewCache(next policies.Evaluator, o CacheOptions) *Cache {
	o = o.withDefaults()
	verdicts, err := lru.New[string, cachedVerdict](o.Size)
	if err != nil {
		// Only a size below 1 fails, which withDefaults rules out.
		panic(err)
	}
	return &Cache{next: next, recheck: o.Recheck, verdicts: verdicts, now: time.Now}
}

// Revision implements policies.Evaluator.
func (c *Cache) Revision() string { return c.next.Revision() }

// Evaluate implements policies.Evaluator: the cached verdict for in, asking
// the policies on a miss and once a denial is older than the recheck
// interval.
func (c *Cache) Evaluate(ctx context.Context, in policies.Input) policies.Verdict {
	b, err := json.Marshal(in)
	if err != nil {
		// Fail closed: an input that cannot be encoded cannot be evaluated.
		return policies.Verdict{Denials: []policies.Reason{{Policy: "claimwarden", Message: "encoding the policy input: " + err.Error()}}}
	}
	sum := sha256.Sum256(b)
	key := in.Change.Namespace + "/" + in.Change.StatefulSet + "/" + in.Change.Claim + "/" + hex.EncodeToString(sum[:]) + "/" + c.next.Revision()
	if hit, ok := c.verdicts.Get(key); ok && (hit.v.Allowed || c.now().Sub(hit.at) < c.recheck) {
		return hit.v
	}
	v := c.next.Evaluate(ctx, in)
	c.verdicts.Add(key, cachedVerdict{v: v, at: c.now()})
	return v
}
