package fluxenv

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pollInterval is how often Until reads the object: the controllers react within
// tens of milliseconds, and one GET is cheap.
const pollInterval = 200 * time.Millisecond

// Object is a Flux object with status conditions, such as *sourcev1.GitRepository
// and *kustomizev1.Kustomization.
type Object = conditions.Getter

// Ready reads obj's Ready condition. ok is true only when it is True for obj's
// current generation: a Ready=True written before the last spec change says
// nothing about that change. reason and message are the condition's (message says
// so when there is no Ready condition yet).
func Ready(obj Object) (ok bool, reason, message string) {
	c := conditions.Get(obj, meta.ReadyCondition)
	if c == nil {
		return false, "", "no Ready condition yet"
	}
	return c.Status == metav1.ConditionTrue && c.ObservedGeneration == obj.GetGeneration(), c.Reason, c.Message
}

// WaitReady polls obj (read into obj) until Ready says ok. It fails early when the
// object is Stalled (Flux's "will not succeed without a change") for its current
// generation, and on ctx's end with the last Ready reason and message.
func WaitReady(ctx context.Context, c client.Client, obj Object) error {
	return Until(ctx, c, obj, func() (bool, error) {
		if s := conditions.Get(obj, meta.StalledCondition); s != nil && s.Status == metav1.ConditionTrue && s.ObservedGeneration == obj.GetGeneration() {
			return false, fmt.Errorf("stalled: %s: %s", s.Reason, s.Message)
		}
		ok, _, _ := Ready(obj)
		return ok, nil
	})
}

// Until reads obj from the API server every pollInterval until done returns true
// (nil) or an error (returned), or ctx ends. The error names the object and carries
// its Ready condition, which is what tells why a Flux object is not where a test
// expected it. done sees obj as just read.
func Until(ctx context.Context, c client.Client, obj Object, done func() (bool, error)) error {
	key := client.ObjectKeyFromObject(obj)
	kind := kindOf(c, obj)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		err := c.Get(ctx, key, obj)
		if err == nil {
			ok, derr := done()
			if derr != nil {
				return fmt.Errorf("%s %s: %w", kind, key, derr)
			}
			if ok {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("%s %s: %w (last get: %v)", kind, key, ctx.Err(), err)
			}
			_, reason, message := Ready(obj)
			return fmt.Errorf("%s %s: %w; Ready reason %q, message %q", kind, key, ctx.Err(), reason, message)
		case <-tick.C:
		}
	}
}

// RequestReconcile sets the reconcile.fluxcd.io/requestedAt annotation on obj,
// which makes its controller reconcile it now rather than at its next interval
// (e.g. a GitRepository right after a push). It returns the value set: the
// object's status.lastHandledReconcileAt equals it once handled.
func RequestReconcile(ctx context.Context, c client.Client, obj client.Object) (string, error) {
	at := time.Now().Format(time.RFC3339Nano)
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, meta.ReconcileRequestAnnotation, at)
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return "", fmt.Errorf("%s %s: annotate %s: %w", kindOf(c, obj), client.ObjectKeyFromObject(obj), meta.ReconcileRequestAnnotation, err)
	}
	return at, nil
}

// kindOf names obj's kind for errors; typed objects read from the API server have
// an empty TypeMeta, so the client's scheme is asked.
func kindOf(c client.Client, obj client.Object) string {
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}
