package converge_test

import (
	"context"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// hookClient is the real client with test code run around the Converger's
// writes: it stands in for a crash right after a delete, or for another actor
// (Flux, Argo CD) acting in the window between delete and create. The requests
// themselves still go to the real API server.
type hookClient struct {
	client.Client
	afterDelete  func(ctx context.Context)
	beforeCreate func(ctx context.Context)

	mu                  sync.Mutex
	deleted, createCall time.Time
}

func (h *hookClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if err := h.Client.Delete(ctx, obj, opts...); err != nil {
		return err
	}
	h.mu.Lock()
	h.deleted = time.Now()
	h.mu.Unlock()
	if h.afterDelete != nil {
		h.afterDelete(ctx)
	}
	return nil
}

func (h *hookClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	co := &client.CreateOptions{}
	co.ApplyOptions(opts)
	if len(co.DryRun) == 0 {
		h.mu.Lock()
		h.createCall = time.Now()
		h.mu.Unlock()
		if h.beforeCreate != nil {
			h.beforeCreate(ctx)
		}
	}
	return h.Client.Create(ctx, obj, opts...)
}

// times returns when the delete returned and when the real create was sent.
func (h *hookClient) times() (deleted, created time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.deleted, h.createCall
}
