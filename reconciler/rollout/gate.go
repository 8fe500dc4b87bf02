package rollout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/diff"
	"github.com/claimwarden/claimwarden/reconciler/plan"
)

// gateResult is what the policies said about one StatefulSet's proposal.
type gateResult struct {
	// claims maps denied claim names to the denial text.
	claims map[string]string
	// statefulSet is the denial of a StatefulSet-level change, or "".
	statefulSet string
}

func (g gateResult) denied() bool { return len(g.claims) > 0 || g.statefulSet != "" }

// verdictCache remembers verdicts by input digest and policy revision, so a
// claim is evaluated (and its decision logged) once per proposal, claim state
// and policy set — never again on unrelated reconciles. Denials expire after
// Options.PolicyRecheck: a policy may depend on the clock (no changes outside
// business hours), and its denial must not outlive the reason.
type verdictCache struct {
	mu sync.Mutex
	m  map[string]cachedVerdict // key: subject + "/" + digest + "/" + revision
}

type cachedVerdict struct {
	v  policies.Verdict
	at time.Time
}

// gate asks the policies the questions of the diff (plan.Questions, shared
// with `claimwarden check`), filling in what only the cluster knows: the
// Namespace and each claim's StorageClass.
func (r *Reconciler) gate(ctx context.Context, sts *appsv1.StatefulSet, res diff.Result, pvcs map[string]*corev1.PersistentVolumeClaim, source policies.Source, recreate bool) (gateResult, error) {
	out := gateResult{claims: map[string]string{}}
	questions := plan.Questions(sts, res, pvcs, recreate)
	if len(questions) == 0 {
		return out, nil
	}
	ns, err := r.namespaceOf(ctx, sts.Namespace)
	if err != nil {
		return out, err
	}
	for _, q := range questions {
		q.Input.Namespace, q.Input.Source = ns, source
		if q.Claim != "" {
			if q.Input.StorageClass, err = r.storageClassOf(ctx, q.PVC); err != nil {
				return out, err
			}
		}
		v := r.evaluate(ctx, q.Claim, q.Input)
		switch {
		case v.Allowed:
		case q.Claim == "":
			out.statefulSet = plan.DenialText(v.Denials)
		default:
			out.claims[q.Claim] = plan.DenialText(v.Denials)
		}
	}
	return out, nil
}

// evaluate returns the cached verdict for in, asking the policies on a miss.
func (r *Reconciler) evaluate(ctx context.Context, subject string, in policies.Input) policies.Verdict {
	b, err := json.Marshal(in)
	if err != nil {
		// Fail closed: an input that cannot be encoded cannot be evaluated.
		return policies.Verdict{Denials: []policies.Reason{{Policy: "claimwarden", Message: "encoding the policy input: " + err.Error()}}}
	}
	sum := sha256.Sum256(b)
	key := in.Change.Namespace + "/" + in.Change.StatefulSet + "/" + subject + "/" + hex.EncodeToString(sum[:]) + "/" + r.opts.Policies.Revision()
	r.verdicts.mu.Lock()
	c, ok := r.verdicts.m[key]
	r.verdicts.mu.Unlock()
	if ok && (c.v.Allowed || time.Since(c.at) < r.opts.PolicyRecheck) {
		return c.v
	}
	v := r.opts.Policies.Evaluate(ctx, in)
	r.verdicts.mu.Lock()
	if len(r.verdicts.m) > maxCachedVerdicts {
		// Old keys (superseded digests and revisions) are never asked for
		// again; dropping everything at a bound keeps memory flat.
		clear(r.verdicts.m)
	}
	r.verdicts.m[key] = cachedVerdict{v: v, at: time.Now()}
	r.verdicts.mu.Unlock()
	return v
}

// maxCachedVerdicts bounds the cache: a few per claim of a large cluster.
const maxCachedVerdicts = 50_000

func (r *Reconciler) storageClassOf(ctx context.Context, pvc *corev1.PersistentVolumeClaim) (*storagev1.StorageClass, error) {
	if pvc == nil || pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName == "" {
		return nil, nil
	}
	sc := &storagev1.StorageClass{}
	if err := r.client.Get(ctx, types.NamespacedName{Name: *pvc.Spec.StorageClassName}, sc); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil, nil
		}
		return nil, fmt.Errorf("reading StorageClass %s of PVC %s/%s: %w", *pvc.Spec.StorageClassName, pvc.Namespace, pvc.Name, err)
	}
	sc.ManagedFields = nil
	return sc, nil
}

func (r *Reconciler) namespaceOf(ctx context.Context, name string) (*corev1.Namespace, error) {
	ns := &corev1.Namespace{}
	if err := r.client.Get(ctx, types.NamespacedName{Name: name}, ns); err != nil {
		return nil, fmt.Errorf("reading Namespace %s: %w", name, err)
	}
	ns.ManagedFields = nil
	return ns, nil
}
