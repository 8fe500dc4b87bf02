package rollout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/diff"
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

// gate asks the policies about every claim that differs from its template and,
// when templates were added or removed, about the StatefulSet.
func (r *Reconciler) gate(ctx context.Context, sts *appsv1.StatefulSet, res diff.Result, pvcs map[string]*corev1.PersistentVolumeClaim, source policies.Source) (gateResult, error) {
	out := gateResult{claims: map[string]string{}}
	ns, err := r.namespaceOf(ctx, sts.Namespace)
	if err != nil {
		return out, err
	}
	desired := trimmed(sts)
	for _, c := range res.Claims {
		if c.Missing || !differs(c) {
			continue
		}
		pvc := pvcs[c.Name]
		sc, err := r.storageClassOf(ctx, pvc)
		if err != nil {
			return out, err
		}
		in := policies.Input{
			Change:       claimChange(sts, c, pvc),
			PVC:          trimmedPVC(pvc),
			StorageClass: sc,
			Template:     templateNamed(sts, c.Template),
			StatefulSet:  desired,
			Namespace:    ns,
			Source:       source,
		}
		if v := r.evaluate(ctx, c.Name, in); !v.Allowed {
			out.claims[c.Name] = reasons(v.Denials)
		}
	}
	if len(res.TemplatesAdded)+len(res.TemplatesRemoved) > 0 {
		in := policies.Input{
			Change: policies.Change{
				Kind: policies.KindStatefulSet, Namespace: sts.Namespace, StatefulSet: sts.Name,
				TemplatesAdded: res.TemplatesAdded, TemplatesRemoved: res.TemplatesRemoved,
			},
			StatefulSet: desired, Namespace: ns, Source: source,
		}
		if v := r.evaluate(ctx, "", in); !v.Allowed {
			out.statefulSet = reasons(v.Denials)
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

// differs reports whether a claim and its template differ in anything a
// policy could have an opinion on.
func differs(c diff.ClaimChange) bool {
	return c.NeedsPatch() || len(c.Immutable) > 0 || c.TemplateRequest.Cmp(c.RequestFrom) != 0 ||
		(c.VACTo != nil && (c.VACFrom == nil || *c.VACFrom != *c.VACTo))
}

// claimChange renders a claim change as the policies see it.
func claimChange(sts *appsv1.StatefulSet, c diff.ClaimChange, pvc *corev1.PersistentVolumeClaim) policies.Change {
	ch := policies.Change{
		Kind: policies.KindClaim, Namespace: sts.Namespace, StatefulSet: sts.Name,
		Claim: c.Name, Template: c.Template, Ordinal: c.Ordinal,
		Storage: &policies.QuantityChange{
			From: c.RequestFrom.String(), To: c.TemplateRequest.String(),
			FromBytes: c.RequestFrom.Value(), ToBytes: c.TemplateRequest.Value(),
		},
		Labels: c.Labels, Annotations: c.Annotations,
	}
	if t := templateNamed(sts, c.Template); t != nil && t.Spec.StorageClassName != nil {
		ch.StorageClassName = &policies.StringChange{From: deref(pvc.Spec.StorageClassName), To: *t.Spec.StorageClassName}
	}
	if c.VACTo != nil && (c.VACFrom == nil || *c.VACFrom != *c.VACTo) {
		ch.VolumeAttributesClassName = &policies.StringChange{From: deref(c.VACFrom), To: *c.VACTo}
	}
	for _, m := range c.Immutable {
		ch.Immutable = append(ch.Immutable, policies.Mismatch{Field: string(m.Field), Live: m.Live, Desired: m.Desired})
	}
	return ch
}

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

// trimmed drops managedFields, which no policy needs and which would make
// every input digest change with each server-side write.
func trimmed(sts *appsv1.StatefulSet) *appsv1.StatefulSet {
	out := sts.DeepCopy()
	out.ManagedFields = nil
	out.Status = appsv1.StatefulSetStatus{}
	return out
}

func trimmedPVC(pvc *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
	if pvc == nil {
		return nil
	}
	out := pvc.DeepCopy()
	out.ManagedFields = nil
	return out
}

// reasons renders denials as "policy: message; policy: message".
func reasons(rs []policies.Reason) string {
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, r.Policy+": "+r.Message)
	}
	return strings.Join(parts, "; ")
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
