package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/claimwarden/claimwarden/test/benchkit"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// workloadSize is the StatefulSets' claim size.
const workloadSize = "1Gi"

// createWorkload creates the spoke's StatefulSets, spread over namespaces,
// and waits until every Pod is Ready and every claim Bound, so the
// controller's caches hold a settled cluster. They do not carry the
// measured label: claimwarden caches them, and reconciles none.
func (b *bench) createWorkload(ctx context.Context) error {
	for i := range b.o.namespaces {
		if err := fixtures.Namespace(ctx, b.spoke.c, workloadNamespace(i)); err != nil {
			return err
		}
	}
	for i := range b.o.statefulSets {
		sts := fixtures.StatefulSet(workloadNamespace(i%b.o.namespaces), fmt.Sprintf("db-%02d", i), int32(b.o.replicas), storageClass, workloadSize)
		if err := b.spoke.c.Create(ctx, sts); err != nil {
			return fmt.Errorf("StatefulSet %s/%s: %w", sts.Namespace, sts.Name, err)
		}
	}
	want := b.o.statefulSets * b.o.replicas
	var ready, bound int
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		ready, bound, err = benchkit.Settled(ctx, b.spoke.c, nil)
		return err == nil && ready == want && bound == want, err
	})
	if err != nil {
		return fmt.Errorf("waiting for the spoke's %d Pods Ready and claims Bound (%d Ready, %d Bound): %w", want, ready, bound, err)
	}
	return nil
}

func workloadNamespace(i int) string { return fmt.Sprintf("spoke-%02d", i) }
