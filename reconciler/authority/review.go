package authority

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// Defaults of the review cache.
const (
	// DefaultReviewTTL is how long an answer is reused: a step's claims
	// are asked about once, and a revoked role takes effect within it.
	DefaultReviewTTL = 10 * time.Second
	// defaultReviewCacheSize bounds the answers kept.
	defaultReviewCacheSize = 4096
)

// Reviews is a Checker asking the API server's authorizers (RBAC, webhooks)
// through SubjectAccessReviews, the same decision the proposer's own
// request would get.
type Reviews struct {
	client  client.Client
	answers *expirable.LRU[string, answer]
}

type answer struct {
	allowed bool
	reason  string
}

// NewReviews returns a Checker creating SubjectAccessReviews with c; each
// answer is reused for ttl (DefaultReviewTTL when not positive).
func NewReviews(c client.Client, ttl time.Duration) *Reviews {
	if ttl <= 0 {
		ttl = DefaultReviewTTL
	}
	return &Reviews{client: c, answers: expirable.NewLRU[string, answer](defaultReviewCacheSize, nil, ttl)}
}

// Check implements Checker.
func (r *Reviews) Check(ctx context.Context, id v1alpha1.Identity, writes []Write) error {
	for _, w := range writes {
		a, err := r.ask(ctx, id, w)
		if err != nil {
			return err
		}
		if !a.allowed {
			return &Refusal{Identity: id, Write: w, Reason: a.reason}
		}
	}
	return nil
}

func (r *Reviews) ask(ctx context.Context, id v1alpha1.Identity, w Write) (answer, error) {
	key := cacheKey(id, w)
	if a, ok := r.answers.Get(key); ok {
		return a, nil
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   id.User,
		Groups: id.Groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: w.Verb, Group: w.Group, Resource: w.Resource, Subresource: w.Subresource,
			Namespace: w.Namespace, Name: w.Name,
		},
	}}
	if err := r.client.Create(ctx, sar); err != nil {
		return answer{}, fmt.Errorf("asking whether %s may %s: %w", id.User, w, err)
	}
	a := answer{allowed: sar.Status.Allowed && !sar.Status.Denied, reason: sar.Status.Reason}
	if sar.Status.EvaluationError != "" && !a.allowed {
		a.reason = strings.TrimSpace(a.reason + " " + sar.Status.EvaluationError)
	}
	r.answers.Add(key, a)
	return a, nil
}

func cacheKey(id v1alpha1.Identity, w Write) string {
	groups := slices.Clone(id.Groups)
	slices.Sort(groups)
	return strings.Join([]string{id.User, strings.Join(groups, ","), w.Verb, w.Group, w.Resource, w.Subresource, w.Namespace, w.Name}, "\x00")
}
