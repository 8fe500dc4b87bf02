package testenv

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// creator is the Create method every typed client has.
type creator[T any] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
}

func create[T any](ctx context.Context, c creator[T], obj T) error {
	_, err := c.Create(ctx, obj, metav1.CreateOptions{})
	return err
}

// createNamespace makes a fresh namespace, so tests sharing the Env do not collide,
// and returns its generated name.
func createNamespace(ctx context.Context, t *testing.T, c kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"},
	}, metav1.CreateOptions{})
	must(t, err)
	return ns.Name
}

// eventually polls check every 100 ms until it returns nil, failing the test with
// check's last error when ctx ends.
func eventually(ctx context.Context, t *testing.T, what string, check func() error) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not reached before deadline: %v", what, err)
		case <-tick.C:
		}
	}
}
