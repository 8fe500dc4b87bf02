package source_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/authority"
	"github.com/claimwarden/claimwarden/reconciler/source"
	"github.com/claimwarden/claimwarden/test/fixtures"
)

// Data keys of a configMapTool's object.
const (
	keySuspend   = "suspend"   // "true": skipped
	keyAttempted = "attempted" // the revision the tool attempts
	keyApplied   = "applied"   // the revision it applied
	keyFail      = "fail"      // set: its desired state cannot be read
	prefixSTS    = "sts."      // sts.<name>: a desired StatefulSet, its template size
	// foreign.<namespace>.<name>: a desired StatefulSet of another
	// namespace, which the tool does not manage.
	prefixForeign = "foreign."
	keyAccount    = "serviceAccount" // the service account the tool applies as
	keyCluster    = "cluster"        // the spoke the tool applies to ("": claimwarden's own)
)

const (
	toolKind       = "Demo"
	toolRepository = "https://git.example.com/org/demo.git"
	toolChart      = "demo@1.2.3"
	reasonSkipped  = "DemoSuspended"
)

// configMapTool is the smallest GitOps tool: a ConfigMap says what it
// attempts, what it applied and the StatefulSets it desires. It implements
// source.Tool with nothing but what a new integration would write.
type configMapTool struct {
	desiredReads atomic.Int32

	mu        sync.Mutex
	nudged    []source.Nudge
	forgotten []types.NamespacedName
}

var (
	_ source.Tool      = (*configMapTool)(nil)
	_ source.Forgetter = (*configMapTool)(nil)
)

func (*configMapTool) Kind() string { return toolKind }

func (*configMapTool) NewObject() client.Object { return &corev1.ConfigMap{} }

func (*configMapTool) Read(_ context.Context, obj client.Object) (source.Reading, error) {
	data := obj.(*corev1.ConfigMap).Data
	switch {
	case data[keySuspend] == "true":
		return source.Reading{State: source.Skipped, Notes: []source.Note{{Type: corev1.EventTypeNormal, Reason: reasonSkipped, Message: "suspended"}}}, nil
	case data[keyAttempted] == data[keyApplied]:
		return source.Reading{State: source.Idle}, nil
	}
	return source.Reading{State: source.Blocked, Revision: data[keyAttempted], Key: data[keyAttempted]}, nil
}

func (t *configMapTool) Desired(_ context.Context, obj client.Object) (source.Desired, error) {
	t.desiredReads.Add(1)
	cm := obj.(*corev1.ConfigMap)
	if msg := cm.Data[keyFail]; msg != "" {
		return source.Desired{}, errors.New(msg)
	}
	rev := cm.Data[keyAttempted]
	d := source.Desired{
		Repository: toolRepository, Revision: rev, Revisions: []string{rev}, Chart: toolChart,
		IgnoredLabels: []string{"team"},
		NothingToDo:   "revision " + rev + " changes nothing",
		Cluster:       cm.Data[keyCluster],
	}
	for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
		if name, ok := strings.CutPrefix(k, prefixSTS); ok {
			d.Candidates = append(d.Candidates, desiredStatefulSet(cm.Namespace, name, cm.Data[k]))
		}
		if ref, ok := strings.CutPrefix(k, prefixForeign); ok {
			ns, name, _ := strings.Cut(ref, ".")
			d.Candidates = append(d.Candidates, desiredStatefulSet(ns, name, cm.Data[k]))
		}
	}
	return d, nil
}

// Authority: the service account the ConfigMap names, if any.
func (*configMapTool) Authority(_ context.Context, obj client.Object) (*v1alpha1.Identity, error) {
	cm := obj.(*corev1.ConfigMap)
	if sa := cm.Data[keyAccount]; sa != "" {
		return authority.ServiceAccount(cm.Namespace, sa), nil
	}
	return nil, nil
}

// Manages: the tool applies only into its ConfigMap's namespace.
func (*configMapTool) Manages(_ context.Context, obj client.Object, live *appsv1.StatefulSet) error {
	if live.Namespace != obj.GetNamespace() {
		return fmt.Errorf("the tool applies only into namespace %s", obj.GetNamespace())
	}
	return nil
}

func (t *configMapTool) Nudge(_ context.Context, n source.Nudge) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.nudged = append(t.nudged, n)
	return nil
}

func (t *configMapTool) Forget(obj types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.forgotten = append(t.forgotten, obj)
}

func (t *configMapTool) nudges() []source.Nudge {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.nudged)
}

func (t *configMapTool) forgets() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.forgotten)
}

func desiredStatefulSet(ns, name, size string) *appsv1.StatefulSet {
	return fixtures.StatefulSet(ns, name, 1, "standard", size)
}
