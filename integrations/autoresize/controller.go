package autoresize

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/gitedit"
	"github.com/claimwarden/claimwarden/integrations/gitstatus"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
	"github.com/claimwarden/claimwarden/integrations/usage"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/authority"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// DefaultInterval is how often usage is read.
const DefaultInterval = 5 * time.Minute

// checkTimeout bounds one StatefulSet's check: Prometheus, the Git host
// and the policies may each hang.
const checkTimeout = 2 * time.Minute

// Usage reads the claims' usage of a namespace (usage.Reader).
type Usage interface {
	Claims(ctx context.Context, ns string, at time.Time) (map[string]usage.Usage, error)
}

// Proposers returns the Proposer of a repository's Git host, with the
// write credentials configured for it.
type Proposers func(repo gitstatus.Repository) (pullrequest.Proposer, error)

// Options tune the controller.
type Options struct {
	Rules []Rule
	// Interval is how often usage is read (DefaultInterval when zero).
	Interval time.Duration
	// StatusContextPrefix starts the commit status context the pull
	// request's body names (gitStatus.contextPrefix).
	StatusContextPrefix string
	// NoCrossNamespaceRefs is the Flux controllers'
	// --no-cross-namespace-refs (flux.noCrossNamespaceRefs).
	NoCrossNamespaceRefs bool
	// MaxClaims bounds templates × replicas of a StatefulSet
	// (maxClaimsPerStatefulSet; diff.Ordinals).
	MaxClaims int
}

// Controller proposes the resizes of the opted-in StatefulSets as pull
// requests, every Interval (a manager.Runnable on the leader).
type Controller struct {
	// Client reads from the manager's cache and writes the
	// VolumeClaimRollouts' status.autoresize; Reader reads the GitOps
	// tools' objects from the API server (the controller may get them,
	// not watch them).
	Client    client.Client
	Reader    client.Reader
	Proposals *proposal.Store
	Usage     Usage
	Policies  policies.Evaluator
	Proposers Proposers
	Recorder  outcome.Recorder
	// Authority checks that the tool's identity may patch the claims the
	// emergency path grows before the merge.
	Authority authority.Checker
	// Owners are the GitOps tools a StatefulSet at rest (no proposal) is
	// found to be applied by (FluxOwners, ArgoCDOwner).
	Owners []Owner
	// Artifacts reads the charts HelmReleases take from Helm repositories
	// (a HelmChart's artifact); nil without Flux's artifact cache.
	Artifacts Artifacts
	// Renderer renders charts to find and check the value that sets a
	// size: out of the controller's process, as a chart is a tenant's code.
	Renderer gitedit.Renderer
	Metrics  *Metrics
	Log      logr.Logger
	Options
	// saidNow are the claims each open pull request's body says grow now
	// (emergency.go).
	saidNow sync.Map
}

var _ manager.LeaderElectionRunnable = (*Controller)(nil)

// NeedLeaderElection is true: only the leader proposes.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start checks every Interval until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	interval := c.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	wait.UntilWithContext(ctx, c.Check, interval)
	return nil
}

// Check reads the usage of every opted-in StatefulSet's claims and
// proposes what the policies decide, once.
func (c *Controller) Check(ctx context.Context) {
	var list appsv1.StatefulSetList
	if err := c.Client.List(ctx, &list); err != nil {
		c.Log.Error(err, "autoresize: listing StatefulSets")
		return
	}
	byNamespace := map[string][]*appsv1.StatefulSet{}
	for i := range list.Items {
		sts := &list.Items[i]
		r := ruleFor(c.Rules, sts.Namespace)
		if r != nil && r.optedIn(sts.Annotations) && sts.DeletionTimestamp == nil {
			byNamespace[sts.Namespace] = append(byNamespace[sts.Namespace], sts)
		}
		if r == nil {
			c.notOptedIn(ctx, sts, time.Now())
		}
	}
	defer c.Metrics.sweep()
	for _, ns := range slices.Sorted(maps.Keys(byNamespace)) {
		now := time.Now()
		used, err := c.Usage.Claims(ctx, ns, now)
		for _, sts := range byNamespace[ns] {
			st := v1alpha1.AutoresizeStatus{LastChecked: metaTime(now)}
			if err != nil {
				st.Message = "reading usage: " + err.Error()
			} else {
				st = c.checkOne(ctx, ruleFor(c.Rules, ns), sts, used, now)
			}
			c.record(ctx, sts, st)
		}
	}
}

// checkOne decides for one StatefulSet and proposes; the status says what
// it did or why not.
func (c *Controller) checkOne(ctx context.Context, rule *Rule, sts *appsv1.StatefulSet, used map[string]usage.Usage, now time.Time) v1alpha1.AutoresizeStatus {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	st := v1alpha1.AutoresizeStatus{LastChecked: metaTime(now)}
	claims, err := c.claims(ctx, sts)
	if err != nil {
		st.Message = err.Error()
		return st
	}
	st.Usage = fullest(claims, used)
	c.Metrics.observe(claims, used)
	src, err := c.sourceOf(ctx, sts)
	if err != nil {
		st.Message = err.Error()
		return st
	}
	job := &check{c: c, rule: rule, sts: sts, src: src, claims: claims, used: used, now: now}
	job.run(ctx, &st)
	return st
}

// claims are the claims of sts's templates and ordinals, resizing or not.
func (c *Controller) claims(ctx context.Context, sts *appsv1.StatefulSet) ([]corev1.PersistentVolumeClaim, error) {
	slots, err := claimSlots(sts, c.MaxClaims)
	if err != nil {
		return nil, err
	}
	var list corev1.PersistentVolumeClaimList
	if err := c.Client.List(ctx, &list, client.InNamespace(sts.Namespace)); err != nil {
		return nil, fmt.Errorf("listing claims in namespace %s: %w", sts.Namespace, err)
	}
	names := make(map[string]bool, len(slots))
	for _, slot := range slots {
		names[slot.name] = true
	}
	return slices.DeleteFunc(list.Items, func(pvc corev1.PersistentVolumeClaim) bool { return !names[pvc.Name] }), nil
}

// fullest is the status's usage text: the fullest claim's, e.g. "85% data-web-0";
// of claims as full, the first by name, whatever order the cache lists
// them in (another name at each check would be a status write at each).
func fullest(claims []corev1.PersistentVolumeClaim, used map[string]usage.Usage) string {
	best, name := -1.0, ""
	for _, pvc := range claims {
		u, ok := used[pvc.Name]
		if f := u.UsedFraction(); ok && (f > best || f == best && pvc.Name < name) {
			best, name = f, pvc.Name
		}
	}
	if name == "" {
		return ""
	}
	return fmt.Sprintf("%.0f%% %s", 100*best, name)
}
