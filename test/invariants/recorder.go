package invariants

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Options say what a Recorder watches.
type Options struct {
	// Namespaces are the namespaces of the run; at least one.
	Namespaces []string
}

// Recorder watches PVCs, Pods, StatefulSets and ControllerRevisions of its
// namespaces; make one with Start.
type Recorder struct {
	client    kubernetes.Interface
	cancel    context.CancelFunc
	factories []informers.SharedInformerFactory

	mu         sync.Mutex
	violations []Violation
	flagged    map[string]bool // rule + object UID: each object breaks a rule once
	claims     map[types.UID]*claimRecord
	podUIDs    map[types.NamespacedName]types.UID
	intended   map[types.NamespacedName]int
	sets       map[types.NamespacedName]bool
	commits    map[commitKey][]string
	counts     Counts
}

// Counts say how much the recorder saw, for the run's summary.
type Counts struct {
	ClaimWrites, ClaimwardenPatches, PodEvents, RevisionEvents, SetEvents int
	IntendedRestarts                                                      int
}

// Start watches opts.Namespaces and returns once the watches have listed
// what exists: that is the baseline, nothing in it is a violation. The
// watches run until Stop.
func Start(ctx context.Context, cfg *rest.Config, opts Options) (*Recorder, error) {
	if len(opts.Namespaces) == 0 {
		return nil, errors.New("invariants: Options.Namespaces is empty: a recorder of nothing finds nothing")
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.Background())
	r := &Recorder{
		client: cs, cancel: cancel,
		flagged:  map[string]bool{},
		claims:   map[types.UID]*claimRecord{},
		podUIDs:  map[types.NamespacedName]types.UID{},
		intended: map[types.NamespacedName]int{},
		sets:     map[types.NamespacedName]bool{},
		commits:  map[commitKey][]string{},
	}
	var synced []cache.InformerSynced
	for _, ns := range opts.Namespaces {
		f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
		for _, reg := range []struct {
			inf cache.SharedIndexInformer
			h   cache.ResourceEventHandlerFuncs
		}{
			{f.Core().V1().PersistentVolumeClaims().Informer(), r.claimHandler()},
			{f.Core().V1().Pods().Informer(), r.podHandler()},
			{f.Apps().V1().StatefulSets().Informer(), r.setHandler()},
			{f.Apps().V1().ControllerRevisions().Informer(), r.revisionHandler()},
		} {
			if _, err := reg.inf.AddEventHandler(reg.h); err != nil {
				cancel()
				return nil, err
			}
			synced = append(synced, reg.inf.HasSynced)
		}
		f.Start(wctx.Done())
		r.factories = append(r.factories, f)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		r.Stop()
		return nil, fmt.Errorf("invariants: watches of %v did not sync: %w", opts.Namespaces, ctx.Err())
	}
	return r, nil
}

// Stop ends the watches. Stop before the test deletes its namespaces, whose
// teardown deletes everything the rules protect.
func (r *Recorder) Stop() {
	r.cancel()
	for _, f := range r.factories {
		f.Shutdown()
	}
}

// IntendRestart registers that the test itself deletes (restarts) Pod
// namespace/name once: that one deletion, and the Pod's re-creation, are
// not violations.
func (r *Recorder) IntendRestart(namespace, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.intended[types.NamespacedName{Namespace: namespace, Name: name}]++
	r.counts.IntendedRestarts++
}

// Check stops the recorder and returns an *Error listing every violation,
// or nil. The StatefulSets seen during the run are read from the API server
// (not the watch, which may lag) to tell whether each is there.
func (r *Recorder) Check(ctx context.Context) error {
	r.Stop()
	r.mu.Lock()
	sets := make([]types.NamespacedName, 0, len(r.sets))
	for k := range r.sets {
		sets = append(sets, k)
	}
	r.mu.Unlock()
	for _, k := range sets {
		_, err := r.client.AppsV1().StatefulSets(k.Namespace).Get(ctx, k.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			r.violate(StatefulSetGone, "StatefulSet "+k.String(), k.String(), "seen during the run, absent at the end")
		case err != nil:
			return fmt.Errorf("invariants: reading StatefulSet %s: %w", k, err)
		}
	}
	r.checkCommits()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.violations) == 0 {
		return nil
	}
	return &Error{Violations: slices.Clone(r.violations)}
}

// Counts returns what the recorder saw so far.
func (r *Recorder) Counts() Counts {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts
}

// violate records a violation of rule by object, once per id (an object's
// UID, or what else names one occurrence).
func (r *Recorder) violate(rule Rule, object, id, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.violateLocked(rule, object, id, format, args...)
}

func (r *Recorder) violateLocked(rule Rule, object, id, format string, args ...any) {
	key := string(rule) + "\x00" + id
	if r.flagged[key] {
		return
	}
	r.flagged[key] = true
	r.violations = append(r.violations, Violation{Rule: rule, Object: object, At: time.Now(), Detail: fmt.Sprintf(format, args...)})
}

// finalState unwraps the object of a delete that a relist found.
func finalState(obj any) any {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return d.Obj
	}
	return obj
}

// Violations returns the violations recorded so far (Check adds those only
// the end can show).
func (r *Recorder) Violations() []Violation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.violations)
}
