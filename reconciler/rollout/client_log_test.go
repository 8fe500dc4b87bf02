package rollout_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// clientLog records what the controller's client reads from its cache and
// writes to the API server, per namespace, so that tests can tell how much
// of a namespace one StatefulSet's rollout touches. The manager's client is
// made by it (see setup), so the storage simulator's writes are in it too.
type clientLog struct {
	mu    sync.Mutex
	lists map[string][]listed       // by namespace
	wrote map[string]map[string]int // by namespace, then "<write> <type>/<name>"
	// applying and mostApplying are the claim applies in flight now and at
	// most, by namespace.
	applying, mostApplying map[string]int
}

// listed is one List the controller's client served.
type listed struct {
	Type     string // e.g. *v1.PersistentVolumeClaimList
	Selector string // the field selector, "" for none
	Items    int
}

var controllerClient = &clientLog{
	lists: map[string][]listed{}, wrote: map[string]map[string]int{},
	applying: map[string]int{}, mostApplying: map[string]int{},
}

// newClient is the manager's NewClient: client.New, logged.
func (l *clientLog) newClient(config *rest.Config, options client.Options) (client.Client, error) {
	c, err := client.New(config, options)
	if err != nil {
		return nil, err
	}
	return loggedClient{Client: c, log: l}, nil
}

// listsIn returns the Lists served in namespace so far.
func (l *clientLog) listsIn(namespace string) []listed {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]listed(nil), l.lists[namespace]...)
}

// writesIn returns the writes to namespace so far, by write and object.
func (l *clientLog) writesIn(namespace string) map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int, len(l.wrote[namespace]))
	for k, n := range l.wrote[namespace] {
		out[k] = n
	}
	return out
}

// mostApplyingIn is the most claim applies in namespace in flight at once.
func (l *clientLog) mostApplyingIn(namespace string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mostApplying[namespace]
}

// applyStarted counts a claim apply in flight in namespace until the
// function it returns is called.
func (l *clientLog) applyStarted(namespace string) (done func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.applying[namespace]++
	l.mostApplying[namespace] = max(l.mostApplying[namespace], l.applying[namespace])
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.applying[namespace]--
	}
}

func (l *clientLog) list(namespace string, e listed) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lists[namespace] = append(l.lists[namespace], e)
}

func (l *clientLog) write(what, namespace, name string, obj any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wrote[namespace] == nil {
		l.wrote[namespace] = map[string]int{}
	}
	l.wrote[namespace][fmt.Sprintf("%s %T/%s", what, obj, name)]++
}

// loggedClient is a client.Client whose Lists and writes go to log.
type loggedClient struct {
	client.Client
	log *clientLog
}

func (c loggedClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	o := (&client.ListOptions{}).ApplyOptions(opts)
	e := listed{Type: fmt.Sprintf("%T", list), Items: meta.LenList(list)}
	if o.FieldSelector != nil {
		e.Selector = o.FieldSelector.String()
	}
	c.log.list(o.Namespace, e)
	return nil
}

func (c loggedClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.log.write("create", obj.GetNamespace(), obj.GetName(), obj)
	return c.Client.Create(ctx, obj, opts...)
}

func (c loggedClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.log.write("update", obj.GetNamespace(), obj.GetName(), obj)
	return c.Client.Update(ctx, obj, opts...)
}

func (c loggedClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.log.write("patch", obj.GetNamespace(), obj.GetName(), obj)
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c loggedClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.log.write("delete", obj.GetNamespace(), obj.GetName(), obj)
	return c.Client.Delete(ctx, obj, opts...)
}

// Apply logs the claims the controller applies (the only apply it makes).
func (c loggedClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	if pvc, ok := obj.(*corev1ac.PersistentVolumeClaimApplyConfiguration); ok && pvc.Namespace != nil && pvc.Name != nil {
		c.log.write("apply", *pvc.Namespace, *pvc.Name, obj)
		defer c.log.applyStarted(*pvc.Namespace)()
	} else {
		c.log.write("apply", "", "", obj)
	}
	return c.Client.Apply(ctx, obj, opts...)
}

func (c loggedClient) Status() client.SubResourceWriter {
	return loggedStatus{SubResourceWriter: c.Client.Status(), log: c.log}
}

// loggedStatus logs status writes.
type loggedStatus struct {
	client.SubResourceWriter
	log *clientLog
}

func (s loggedStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	s.log.write("status update", obj.GetNamespace(), obj.GetName(), obj)
	return s.SubResourceWriter.Update(ctx, obj, opts...)
}

func (s loggedStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	what := "status patch"
	// Other tests change the policies, which rewrites every rollout's
	// PoliciesReady condition; a write that moves claims is told apart.
	if b, err := patch.Data(obj); err == nil && bytes.Contains(b, []byte(`"claims":`)) {
		what = "status patch of claims"
	}
	s.log.write(what, obj.GetNamespace(), obj.GetName(), obj)
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// SubResource logs the evictions the controller asks for, with the API
// server's answer: "eviction create ok|429|error".
func (c loggedClient) SubResource(sub string) client.SubResourceClient {
	return loggedSubResource{SubResourceClient: c.Client.SubResource(sub), sub: sub, log: c.log}
}

type loggedSubResource struct {
	client.SubResourceClient
	sub string
	log *clientLog
}

func (s loggedSubResource) Create(ctx context.Context, obj, subResource client.Object, opts ...client.SubResourceCreateOption) error {
	err := s.SubResourceClient.Create(ctx, obj, subResource, opts...)
	result := "ok"
	switch {
	case apierrors.IsTooManyRequests(err):
		result = "429"
	case err != nil:
		result = "error"
	}
	s.log.write(s.sub+" create "+result, obj.GetNamespace(), obj.GetName(), obj)
	return err
}
