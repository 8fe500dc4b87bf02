package autoresize

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/gitedit"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/pullrequest"
	"github.com/claimwarden/claimwarden/integrations/usage"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/assess"
	"github.com/claimwarden/claimwarden/reconciler/authority"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

const (
	// DefaultInterval is how often usage is read.
	DefaultInterval = 5 * time.Minute
	// DefaultConcurrency is how many StatefulSets are checked at once.
	DefaultConcurrency = 4
	// DefaultCheckTimeout bounds one StatefulSet's check: Prometheus, the
	// Git host, the policies and the render may each hang.
	DefaultCheckTimeout = 2 * time.Minute
)

// Usage reads the claims' usage of a namespace, or of several at once
// (usage.Reader).
type Usage interface {
	Claims(ctx context.Context, ns string, at time.Time) (map[string]usage.Usage, error)
	Namespaces(ctx context.Context, nss []string, at time.Time) (map[string]map[string]usage.Usage, error)
}

// Proposers returns the Proposer of a repository's Git host, with the
// write credentials configured for it.
type Proposers func(repo githost.Repository) (pullrequest.Proposer, error)

// Rollout is the rollout controller as autoresize asks it
// (rollout.Reconciler): what it assesses a StatefulSet's proposals with,
// so that a pull request is opened only for what the rollout will allow.
type Rollout interface {
	Ahead(ctx context.Context, sts *appsv1.StatefulSet, src policies.Source, claims []corev1.PersistentVolumeClaim) (assess.Settings, assess.Cluster)
}

// Options tune the controller.
type Options struct {
	Rules []Rule
	// Interval is how often usage is read (DefaultInterval when zero):
	// the time between the end of a round over the opted-in StatefulSets
	// and the start of the next.
	Interval time.Duration
	// Concurrency is how many StatefulSets are checked at once
	// (DefaultConcurrency when zero).
	Concurrency int
	// CheckTimeout is the deadline of one StatefulSet's check
	// (DefaultCheckTimeout when zero).
	CheckTimeout time.Duration
	// StatusContextPrefix starts the commit status context the pull
	// request's body names: the cluster's (commitstatus.ClusterPrefix of
	// gitStatus.contextPrefix).
	StatusContextPrefix string
	// MaxClaims bounds templates × replicas of a StatefulSet
	// (maxClaimsPerStatefulSet; diff.Ordinals).
	MaxClaims int
	// Cluster is claimwarden's name for the cluster the Controller checks
	// (config clusters, source.Desired.Cluster); "" is its own. A spoke's
	// StatefulSets are applied by tool objects on the hub that apply to
	// it, and their pull requests' keys name it (Key).
	Cluster string
}

// Controller proposes the resizes of the opted-in StatefulSets of one
// cluster as pull requests, every Interval (a manager.Runnable on the
// leader): one Controller per cluster, each with that cluster's clients,
// writer, store, usage and rollout.
type Controller struct {
	// Client reads the cluster checked from its cache; Reader reads the
	// GitOps tools' objects from claimwarden's own API server: those the
	// source watchers watch from their cache, the others (their sources,
	// which the controller may get, not watch) with a GET
	// (source.Registry.WatchedReader).
	Client client.Client
	Reader client.Reader
	// Writer writes status.autoresize and grows claims now: the rollout's.
	Writer    Writer
	Proposals *proposal.Store
	Usage     Usage
	Policies  policies.Evaluator
	Rollout   Rollout
	Proposers Proposers
	Recorder  outcome.Recorder
	// Authority checks that the tool's identity may patch the claims the
	// emergency path grows before the merge.
	Authority authority.Checker
	// Tools are the enabled GitOps tools: they find the tool object that
	// applies a StatefulSet at rest (no proposal), and where in Git it
	// reads the StatefulSet from.
	Tools *source.Registry
	// Artifacts reads the charts HelmReleases take from Helm repositories
	// (a HelmChart's artifact); nil without Flux's artifact cache.
	Artifacts Artifacts
	// Renderer renders charts to find and check the value that sets a
	// size: out of the controller's process, as a chart is a tenant's code.
	Renderer gitedit.Renderer
	// Shard, when set, says whether this instance handles a StatefulSet
	// (sharding, rollout.Options.Shard): the others are not checked.
	Shard   func(ctx context.Context, key types.NamespacedName) (bool, error)
	Metrics *Metrics
	Log     logr.Logger
	Options
	// saidNow are the claims each open pull request's body says grow now
	// (emergency.go).
	saidNow sync.Map
	// sched is the running loop's, nil before Start (on a replica that is
	// not the leader).
	sched atomic.Pointer[scheduler]
}

var _ manager.LeaderElectionRunnable = (*Controller)(nil)

// NeedLeaderElection is true: only the leader proposes.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start checks the opted-in StatefulSets every Interval until ctx ends,
// Concurrency at a time (queue.go).
func (c *Controller) Start(ctx context.Context) error {
	s := newScheduler(c)
	c.sched.Store(s)
	s.run(ctx)
	return nil
}

// optedIn are the StatefulSets autoresize checks, sorted.
func (c *Controller) optedIn(ctx context.Context) ([]types.NamespacedName, error) {
	var list appsv1.StatefulSetList
	if err := c.Client.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing StatefulSets: %w", err)
	}
	var out []types.NamespacedName
	for i := range list.Items {
		sts := &list.Items[i]
		if !c.mine(ctx, sts) {
			continue
		}
		if c.watches(sts) {
			out = append(out, keyOf(sts))
		}
		if ruleFor(c.Rules, sts.Namespace) == nil {
			c.notOptedIn(ctx, sts, time.Now())
		}
	}
	slices.SortFunc(out, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	return out, nil
}

// mine reports whether this instance handles sts (Shard); one it cannot
// tell is left for the next round.
func (c *Controller) mine(ctx context.Context, sts *appsv1.StatefulSet) bool {
	if c.Shard == nil {
		return true
	}
	ok, err := c.Shard(ctx, keyOf(sts))
	if err != nil {
		c.Log.Error(err, "telling which claimwarden instance handles the StatefulSet", "statefulSet", keyOf(sts))
	}
	return ok && err == nil
}

// watches reports whether autoresize checks sts.
func (c *Controller) watches(sts *appsv1.StatefulSet) bool {
	r := ruleFor(c.Rules, sts.Namespace)
	return r != nil && r.optedIn(sts.Annotations) && sts.DeletionTimestamp == nil
}

// check checks the StatefulSet key once under ctx, with the usage of its
// namespace read through u, and records what it found under recordCtx
// (a check that used up its deadline says so); failed says it should be
// retried later than the next round (a Git host, a policy engine,
// Prometheus or the API server failed).
func (c *Controller) check(ctx, recordCtx context.Context, key types.NamespacedName, m memos) (failed bool) {
	var sts appsv1.StatefulSet
	if err := c.Client.Get(ctx, key, &sts); err != nil {
		if client.IgnoreNotFound(err) != nil {
			c.Log.Error(err, "autoresize: reading the StatefulSet", "statefulset", key)
			return true
		}
		return false
	}
	if !c.watches(&sts) {
		return false
	}
	used, now, err := m.usage.claims(ctx, key.Namespace)
	st := v1alpha1.AutoresizeStatus{LastChecked: metaTime(now)}
	if err != nil {
		st.Message = "reading usage: " + err.Error()
		failed = true
	} else {
		st, failed = c.checkOne(ctx, ruleFor(c.Rules, key.Namespace), &sts, used, now, m)
	}
	c.record(recordCtx, &sts, st)
	return failed
}

// checkOne decides for one StatefulSet and proposes; the status says what
// it did or why not, failed whether a Git host, a policy engine or the
// cache failed.
func (c *Controller) checkOne(ctx context.Context, rule *Rule, sts *appsv1.StatefulSet, used map[string]usage.Usage, now time.Time, m memos) (st v1alpha1.AutoresizeStatus, failed bool) {
	st = v1alpha1.AutoresizeStatus{LastChecked: metaTime(now)}
	claims, err := c.claims(ctx, sts)
	if err != nil {
		st.Message = err.Error()
		return st, false
	}
	st.Usage = fullest(claims, used)
	c.Metrics.observe(claims, used)
	src, err := c.sourceOf(ctx, sts, m.tools)
	if err != nil {
		st.Message = err.Error()
		return st, false
	}
	job := &job{c: c, rule: rule, sts: sts, src: src, claims: claims, used: used, now: now, tools: m.tools, repos: m.repos}
	job.run(ctx, &st)
	return st, job.err != nil
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
// A claim whose usage is not decided on (against) is not shown: its
// figures may be a forged series'.
func fullest(claims []corev1.PersistentVolumeClaim, used map[string]usage.Usage) string {
	best, name := -1.0, ""
	for i := range claims {
		pvc := &claims[i]
		u, ok := used[pvc.Name]
		if f := u.UsedFraction(); ok && against(u, pvc) == "" && (f > best || f == best && pvc.Name < name) {
			best, name = f, pvc.Name
		}
	}
	if name == "" {
		return ""
	}
	return fmt.Sprintf("%.0f%% %s", 100*best, name)
}
