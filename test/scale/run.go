package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/benchkit"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/storagesim"
	"github.com/claimwarden/claimwarden/test/testenv"
)

const (
	storageClass = "scale-sim"
	fromSize     = "1Gi"
	toSize       = "2Gi"
	// pokeAnnotation is set on every StatefulSet to make the controller
	// reconcile each once with nothing to do (see runner.rest).
	pokeAnnotation = "scale.claimwarden.dev/poked-at"
)

// runner holds what a run started and measured.
type runner struct {
	o     options
	began time.Time
	env   *testenv.Env
	c     client.WithWatch
	proxy *apiProxy
	ctrl  *controllerProc
	keys  []client.ObjectKey
	rep   *Report
	// lastProgress is when a poll last printed its status.
	lastProgress time.Time
	// ctrlStopped is set once the manual phase has stopped the controller.
	ctrlStopped bool
	// pprofAddr serves the controller's /debug/pprof when -profile is set.
	pprofAddr string
	// namespacesCreated is set once the run's namespaces exist.
	namespacesCreated bool
}

// run starts everything, runs the phases and always stops what it started.
// The report is returned (partly filled) even when a phase fails.
func run(ctx context.Context, o options) (rep *Report, err error) {
	interrupted := ctx.Err
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	r := &runner{o: o, began: time.Now(), rep: newReport(o)}
	r.logf("claimwarden scale run: %d StatefulSets × %d replicas in %d namespaces, simulated resize %s",
		o.statefulSets, o.replicas, o.namespaces, o.delay)

	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, fmt.Errorf("%w: run from the repository", err)
	}
	bin := o.controller
	if bin == "" {
		dir, err := os.MkdirTemp("", "claimwarden-scale-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		r.logf("building ./cmd/claimwarden")
		r.rep.ControllerSource = sourceState(ctx, root)
		if bin, err = benchkit.BuildController(ctx, root, dir); err != nil {
			return nil, err
		}
	} else {
		r.rep.ControllerSource = "prebuilt binary " + bin
	}
	r.rep.Controller = controllerVersion(ctx, bin)
	r.logf("controller: %s; source: %s", r.rep.Controller, r.rep.ControllerSource)

	stop, err := r.start(ctx, root, bin)
	defer func() {
		// A failed run keeps its logs (an interrupted one does not).
		if r.env != nil && err != nil && interrupted() == nil {
			r.env.KeepDir = true
		}
		r.logf("stopping the controller, the storage simulator and the control plane")
		if serr := stop(); serr != nil {
			err = errors.Join(err, serr)
		}
		if r.env != nil && r.env.KeepDir {
			r.logf("logs kept in %s", r.env.Dir)
		}
	}()
	if err != nil {
		return r.rep, err
	}
	go r.ctrl.sampleMemory(ctx, time.Second)

	for _, phase := range []func(context.Context) error{r.setup, r.rest, r.bump, r.readMemory} {
		if err := phase(ctx); err != nil {
			return r.rep, err
		}
	}
	if o.manual {
		if err := r.manual(ctx); err != nil {
			return r.rep, err
		}
	}
	r.rep.evaluate(o)
	return r.rep, nil
}

// start brings up the control plane, the storage simulator, the proxy and the
// controller, and returns the function that stops them in reverse order
// (even after a failed start).
func (r *runner) start(ctx context.Context, root, bin string) (stop func() error, err error) {
	var stops []func() error
	stop = func() error {
		var errs []error
		for i := len(stops) - 1; i >= 0; i-- {
			errs = append(errs, stops[i]())
		}
		return errors.Join(errs...)
	}

	r.logf("starting the control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok)")
	// A loaded machine needs longer than testenv's default 90 s start deadline.
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	r.env, err = testenv.Start(startCtx, testenv.Options{
		Kwok:      true,
		CRDDirs:   []string{filepath.Join(root, "config", "crd", "bases")},
		ClientQPS: r.o.clientQPS,
	})
	if err != nil {
		return stop, err
	}
	stops = append(stops, r.env.Stop)
	r.rep.Setup.ControlPlaneSeconds = r.env.StartupTime.Seconds()

	// The simulator logs to a file: it is part of the environment, not of the report.
	simLog, err := os.Create(filepath.Join(r.env.Dir, "storagesim.log"))
	if err != nil {
		return stop, err
	}
	stops = append(stops, simLog.Close)
	logger := zap.New(zap.WriteTo(simLog))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)

	// The simulator plays the storage, whose speed is -delay; client-side rate
	// limiting must not slow it down on top, so it has none. It runs in this
	// process, whose client metrics are not the controller's.
	simCfg, err := r.accountConfig(ctx, "storagesim")
	if err != nil {
		return stop, err
	}
	simCfg.QPS = -1
	// Real storage resizes volumes independently of each other; the
	// simulator's default 4 workers would queue thousands of claims.
	sim := &storagesim.Simulator{Delay: r.o.delay, Workers: 32}
	if r.o.delay == 0 {
		sim.Delay = -1 // the simulator's "no delay"; its zero means the default
	}
	simCtx, simCancel := context.WithCancel(context.WithoutCancel(ctx))
	simDone := make(chan error, 1)
	go func() { simDone <- sim.Start(simCtx, simCfg) }()
	stops = append(stops, func() error {
		simCancel()
		if err := <-simDone; err != nil {
			return fmt.Errorf("storage simulator: %w", err)
		}
		return nil
	})

	// This program's own client: creating and polling hundreds of objects at
	// testenv's 100 QPS would make the run wait on itself.
	cfg := rest.CopyConfig(r.env.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return stop, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return stop, err
	}
	if r.c, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme}); err != nil {
		return stop, err
	}

	controllerCfg, err := r.accountConfig(ctx, "claimwarden")
	if err != nil {
		return stop, err
	}
	if r.proxy, err = startProxy(controllerCfg); err != nil {
		return stop, err
	}
	stops = append(stops, r.proxy.close)
	kubeconfig := filepath.Join(r.env.Dir, "claimwarden.kubeconfig")
	if err := r.proxy.writeKubeconfig(kubeconfig); err != nil {
		return stop, err
	}
	args := []string{"--max-concurrent-patches", strconv.Itoa(r.o.maxConcurrentPatches)}
	if r.o.crowd > 0 {
		if err := r.createCrowd(ctx); err != nil {
			return stop, err
		}
		// Helm's release records are watched in these namespaces, as a
		// team running `helm upgrade` from CI would configure it.
		args = append(args, "--helm", "--helm-namespaces", strings.Join(r.namespaceNames(), ","))
	}
	if r.o.profile != "" {
		ports, err := testenv.FreePorts(1)
		if err != nil {
			return stop, err
		}
		r.pprofAddr = "127.0.0.1:" + strconv.Itoa(ports[0])
		args = append(args, "--pprof-addr", r.pprofAddr)
	}
	if r.o.controllerWorkers > 0 {
		args = append(args, "--workers", strconv.Itoa(r.o.controllerWorkers))
	}
	started := time.Now()
	if r.ctrl, err = startController(bin, kubeconfig, r.env.Dir, args...); err != nil {
		return stop, err
	}
	stops = append(stops, r.stopController)
	r.rep.Memory.ControllerPID = r.ctrl.Pid()
	if err := r.ctrl.WaitReady(ctx, time.Minute); err != nil {
		return stop, err
	}
	if r.rep.Setup.CacheSyncSeconds, err = r.waitCachesSynced(ctx, started); err != nil {
		return stop, err
	}
	r.logf("controller pid %d ready; it reaches the API server through the counting proxy %s", r.ctrl.Pid(), r.proxy.url)
	return stop, nil
}

// setup creates the StatefulSets and waits until everything is Ready.
func (r *runner) setup(ctx context.Context) error {
	if err := r.c.Create(ctx, storagesim.StorageClass(storageClass, true)); err != nil {
		return err
	}
	if err := r.createNamespaces(ctx); err != nil {
		return err
	}
	for i := range r.o.statefulSets {
		r.keys = append(r.keys, client.ObjectKey{Namespace: namespaceName(i % r.o.namespaces), Name: fmt.Sprintf("db-%03d", i)})
	}

	began := time.Now()
	r.logf("creating %d StatefulSets", len(r.keys))
	_, err := r.each(ctx, func(ctx context.Context, key client.ObjectKey) error {
		return r.c.Create(ctx, fixtures.StatefulSet(key.Namespace, key.Name, int32(r.o.replicas), storageClass, fromSize))
	})
	if err != nil {
		return err
	}
	r.rep.Setup.CreateSeconds = time.Since(began).Seconds()

	pvcs := len(r.keys) * r.o.replicas
	r.logf("waiting for %d Pods Ready, %d PVCs Bound, %d VolumeClaimRollouts Ready", pvcs, pvcs, len(r.keys))
	var last string
	err = benchkit.Poll(ctx, r.ctrl, 2*time.Second, "setup", func(ctx context.Context) (bool, error) {
		st, err := r.setupStatus(ctx)
		if err != nil {
			return false, err
		}
		last = st.String()
		r.progress(last)
		if r.rep.Setup.PodsAndClaimsSeconds == 0 && st.podsReady == st.pods && st.pvcsBound == st.pods {
			r.rep.Setup.PodsAndClaimsSeconds = time.Since(began).Seconds()
		}
		return st.done(), nil
	})
	if err != nil {
		return fmt.Errorf("%w (last: %s)", err, last)
	}
	r.rep.Setup.ReadySeconds = time.Since(began).Seconds()
	r.logf("setup done in %.1fs", r.rep.Setup.ReadySeconds)
	if m, err := benchkit.ReadMemory(r.ctrl.Pid()); err == nil {
		r.rep.Memory.AfterSetupRSSMiB = mib(m.RSSKiB)
	}
	return nil
}

type setupStatus struct {
	podsReady, pvcsBound, vcrsReady, pods, vcrs int
}

func (s setupStatus) done() bool {
	return s.podsReady == s.pods && s.pvcsBound == s.pods && s.vcrsReady == s.vcrs
}

func (s setupStatus) String() string {
	return fmt.Sprintf("Pods Ready %d/%d, PVCs Bound %d/%d, VolumeClaimRollouts Ready %d/%d",
		s.podsReady, s.pods, s.pvcsBound, s.pods, s.vcrsReady, s.vcrs)
}

// setupStatus counts with three lists per poll, not one request per object.
func (r *runner) setupStatus(ctx context.Context) (setupStatus, error) {
	st := setupStatus{pods: len(r.keys) * r.o.replicas, vcrs: len(r.keys)}
	var err error
	if st.podsReady, st.pvcsBound, err = benchkit.Settled(ctx, r.c, r.ours, notCrowd); err != nil {
		return st, err
	}
	var vcrs v1alpha1.VolumeClaimRolloutList
	if err := r.c.List(ctx, &vcrs); err != nil {
		return st, err
	}
	for i := range vcrs.Items {
		if r.ours(vcrs.Items[i].Namespace) && benchkit.Converged(&vcrs.Items[i], fromSize, r.o.replicas) {
			st.vcrsReady++
		}
	}
	return st, nil
}

// rest measures the controller with nothing to do. There is no way to force
// a resync from outside, and its resync period (hours) is longer than any
// run, so "at rest" is measured twice:
//
//   - idle: from the moment the controller is quiet (its reconcile and
//     request counts unchanged over -settle) for -rest-window, which would
//     show a controller that requeues or polls on its own;
//   - no-op reconciles: an annotation nobody reads is set on every
//     StatefulSet, which makes the controller reconcile each once with nothing
//     to change, as a resync would. The window ends when the reconcile count
//     has grown by the number of StatefulSets and is quiet again.
//
// Both must write nothing.
func (r *runner) rest(ctx context.Context) error {
	r.logf("at rest: waiting for the controller to be quiet (no reconcile or request over %s)", r.o.settle)
	s0, err := r.settle(ctx)
	if err != nil {
		return err
	}
	changes, err := r.watchChanges(ctx)
	if err != nil {
		return err
	}
	defer changes.stop()
	r.proxy.setCapturing(true)
	defer r.proxy.setCapturing(false)

	r.logf("at rest: idle window of %s", r.o.restWindow)
	if err := benchkit.Observe(ctx, r.ctrl, r.o.restWindow); err != nil {
		return err
	}
	s1, err := r.scrape(ctx)
	if err != nil {
		return err
	}
	r.rep.Rest.Idle = r.diff(s0, s1)
	r.rep.Rest.IdleChanges = changes.take()
	r.rep.Rest.IdleWrites = r.proxy.setCapturing(true)

	r.logf("at rest: annotating %d StatefulSets to cause one no-op reconcile each", len(r.keys))
	stamp := time.Now().UTC().Format(time.RFC3339Nano)
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, pokeAnnotation, stamp)))
	if _, err := r.each(ctx, func(ctx context.Context, key client.ObjectKey) error {
		sts := &appsv1.StatefulSet{}
		sts.Namespace, sts.Name = key.Namespace, key.Name
		return r.c.Patch(ctx, sts, patch)
	}); err != nil {
		return err
	}
	want := s1.reconcileTotal() + float64(len(r.keys))
	err = benchkit.Poll(ctx, r.ctrl, 500*time.Millisecond, "no-op reconciles", func(ctx context.Context) (bool, error) {
		s, err := r.scrape(ctx)
		return err == nil && s.reconcileTotal() >= want, err
	})
	if err != nil {
		return err
	}
	s2, err := r.settle(ctx)
	if err != nil {
		return err
	}
	r.rep.Rest.NoOp = r.diff(s1, s2)
	r.rep.Rest.NoOpChanges = changes.take()
	r.rep.Rest.NoOpWrites = r.proxy.setCapturing(false)
	r.rep.Rest.StatefulSetsPoked = len(r.keys)
	r.logf("at rest: idle %d writes, no-op reconciles %d writes", r.rep.Rest.Idle.Writes, r.rep.Rest.NoOp.Writes)
	return nil
}

// bump changes every StatefulSet's template to toSize by orphan delete and
// re-create, and waits until every rollout is Ready at toSize.
func (r *runner) bump(ctx context.Context) error {
	before, err := r.scrape(ctx)
	if err != nil {
		return err
	}
	b := &r.rep.Bump
	depthCtx, stopDepth := context.WithCancel(ctx)
	defer stopDepth()
	depth := make(chan float64, 1)
	go func() { depth <- r.peakQueueDepth(depthCtx, queueDepthInterval) }()
	pods, err := r.podUIDs(ctx)
	if err != nil {
		return err
	}
	line, err := r.watchTimeline(ctx, toSize)
	if err != nil {
		return err
	}
	defer line.stop()
	profiled := r.profileBump(ctx)
	from, err := r.sampleWindow()
	if err != nil {
		return err
	}
	first := time.Now()
	r.logf("bump: orphan delete + re-create of %d StatefulSets with %s (%d workers)", len(r.keys), toSize, r.o.workers)
	recreated, err := r.each(ctx, func(ctx context.Context, key client.ObjectKey) error {
		return fixtures.ReplaceTemplates(ctx, r.c, key, fixtures.SetTemplateSize(toSize))
	})
	if err != nil {
		return err
	}
	var last time.Time
	for _, t := range recreated {
		if t.After(last) {
			last = t
		}
	}
	b.LastRecreateSeconds = last.Sub(first).Seconds()
	r.logf("bump: last re-create finished after %.1fs; waiting for every VolumeClaimRollout Ready at %s", b.LastRecreateSeconds, toSize)

	ready, err := r.watchReady(ctx, toSize)
	if err != nil {
		return fmt.Errorf("%w (%d/%d Ready at %s)", err, len(ready), len(r.keys), toSize)
	}
	b.AllReadySeconds = time.Since(first).Seconds()
	end, err := r.sampleWindow()
	if err != nil {
		return err
	}
	b.CPU, b.Storage = from.between(end, b.AllReadySeconds)
	if err := <-profiled; err != nil {
		return fmt.Errorf("CPU profiles of the bump: %w", err)
	}
	stopDepth()
	b.PeakQueueDepth = <-depth
	r.logf("bump: all %d rollouts Ready at %s after %.1fs", len(r.keys), toSize, b.AllReadySeconds)

	var per []float64
	for key, t := range ready {
		per = append(per, t.Sub(recreated[key]).Seconds())
	}
	b.PerStatefulSet = summarize(per)
	// Claims resize -max-concurrent-patches at a time.
	steps := float64((r.o.replicas + r.o.maxConcurrentPatches - 1) / r.o.maxConcurrentPatches)
	b.LowerBoundSeconds = b.LastRecreateSeconds + steps*r.o.delay.Seconds()
	b.PerStatefulSetLowerBound = steps * r.o.delay.Seconds()

	line.stop()
	b.Steps = line.steps(r.claimKeys(), recreated, ready, r.o.maxConcurrentPatches, r.o.delay)
	if err := r.checkClaims(ctx); err != nil {
		return err
	}
	if b.PodsRestarted, err = r.podsRestarted(ctx, pods); err != nil {
		return err
	}
	after, err := r.settle(ctx)
	if err != nil {
		return err
	}
	b.Requests = r.diff(before, after)
	if m, err := benchkit.ReadMemory(r.ctrl.Pid()); err == nil {
		r.rep.Memory.AfterBumpRSSMiB = mib(m.RSSKiB)
	}
	r.rep.Memory.HeapInuseMiB = after.heapInuse / (1 << 20)
	return nil
}

// watchReady returns when every rollout is Ready at size, with the moment
// each was first seen so (watchUntil says why it watches).
func (r *runner) watchReady(ctx context.Context, size string) (map[client.ObjectKey]time.Time, error) {
	ready := make(map[client.ObjectKey]time.Time, len(r.keys))
	see := func(o runtime.Object) {
		v, ok := o.(*v1alpha1.VolumeClaimRollout)
		if !ok {
			return
		}
		key := client.ObjectKeyFromObject(v)
		if _, seen := ready[key]; !seen && r.ours(key.Namespace) && benchkit.Converged(v, size, r.o.replicas) {
			ready[key] = time.Now()
		}
	}
	tick := func() error {
		if err := r.ctrl.Exited(); err != nil {
			return err
		}
		r.progress(fmt.Sprintf("VolumeClaimRollouts Ready at %s: %d/%d", size, len(ready), len(r.keys)))
		return nil
	}
	err := r.watchUntil(ctx, &v1alpha1.VolumeClaimRolloutList{}, see, func() bool { return len(ready) == len(r.keys) }, tick)
	return ready, err
}

// readMemory records the controller's peak and current memory; it runs
// before the manual phase stops the controller.
func (r *runner) readMemory(context.Context) error {
	if m, err := benchkit.ReadMemory(r.ctrl.Pid()); err == nil {
		r.rep.Memory.EndRSSMiB = mib(m.RSSKiB)
		r.rep.Memory.PeakRSSMiB = mib(m.HWMKiB)
	} else {
		r.rep.Memory.Note = "no /proc memory figures: " + err.Error()
	}
	r.rep.Memory.SampledPeakRSSMiB = mib(r.ctrl.sampledPeakRSS())
	return nil
}

// queueDepthInterval is how often the bump samples the controller's queue
// depth, about as often as Prometheus scrapes. A scrape is not free for the
// measured controller: at 2,000 StatefulSets it sorts and renders some
// 20,000 series (about 160 ms of CPU), and sampled every 2 s the scrapes were
// half of its CPU in the bump and took that from the API server's cores.
const queueDepthInterval = 10 * time.Second

// peakQueueDepth samples the controller's workqueue depth every interval
// until ctx ends and returns the largest: StatefulSets waiting for the
// controller rather than for their storage.
func (r *runner) peakQueueDepth(ctx context.Context, interval time.Duration) float64 {
	var peak float64
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if fams, err := benchkit.Scrape(ctx, r.ctrl.metricsURL); err == nil {
			peak = max(peak, benchkit.Sum(fams["workqueue_depth"], isQueue))
		}
		select {
		case <-ctx.Done():
			return peak
		case <-tick.C:
		}
	}
}

// checkClaims verifies on the PVCs themselves what the rollouts report: every
// claim requests toSize and its capacity is toSize.
func (r *runner) checkClaims(ctx context.Context) error {
	var claims corev1.PersistentVolumeClaimList
	if err := r.c.List(ctx, &claims, notCrowd); err != nil {
		return err
	}
	want := resource.MustParse(toSize)
	b := &r.rep.Bump
	for _, c := range claims.Items {
		if !r.ours(c.Namespace) {
			continue
		}
		b.PVCs++
		if q := c.Spec.Resources.Requests[corev1.ResourceStorage]; q.Cmp(want) == 0 {
			b.PVCsChanged++
		}
		if q := c.Status.Capacity[corev1.ResourceStorage]; q.Cmp(want) == 0 {
			b.PVCsAtCapacity++
		}
	}
	if n := len(r.keys) * r.o.replicas; b.PVCs != n || b.PVCsChanged != n || b.PVCsAtCapacity != n {
		return fmt.Errorf("rollouts Ready but PVCs disagree: %d PVCs (want %d), %d request %s, %d have capacity %s",
			b.PVCs, n, b.PVCsChanged, toSize, b.PVCsAtCapacity, toSize)
	}
	return nil
}

// settle waits until the controller is quiet: two scrapes -settle apart see
// the same reconcile count and the same number of (non-watch) requests.
// That is an observable end of activity, not a guess at how long it takes.
func (r *runner) settle(ctx context.Context) (*snapshot, error) {
	prev, err := r.scrape(ctx)
	if err != nil {
		return nil, err
	}
	var last *snapshot
	err = benchkit.PollAfter(ctx, r.ctrl, r.o.settle, "the controller to be quiet", func(ctx context.Context) (bool, error) {
		s, err := r.scrape(ctx)
		if err != nil {
			return false, err
		}
		quiet := s.reconcileTotal() == prev.reconcileTotal() && s.proxyRequests() == prev.proxyRequests()
		prev, last = s, s
		return quiet, nil
	})
	return last, err
}

// each runs fn for every StatefulSet on -workers goroutines and returns when
// each call finished; the first error cancels the rest.
func (r *runner) each(ctx context.Context, fn func(context.Context, client.ObjectKey) error) (map[client.ObjectKey]time.Time, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	keys := make(chan client.ObjectKey)
	var mu sync.Mutex
	finished := make(map[client.ObjectKey]time.Time, len(r.keys))
	var wg sync.WaitGroup
	for range min(r.o.workers, len(r.keys)) {
		wg.Go(func() {
			for key := range keys {
				if err := fn(ctx, key); err != nil {
					cancel(fmt.Errorf("%s: %w", key, err))
					continue
				}
				mu.Lock()
				finished[key] = time.Now()
				mu.Unlock()
			}
		})
	}
feed:
	for _, key := range r.keys {
		select {
		case keys <- key:
		case <-ctx.Done():
			break feed
		}
	}
	close(keys)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return finished, nil
}

func (r *runner) ours(namespace string) bool { return strings.HasPrefix(namespace, namespacePrefix) }

const namespacePrefix = "scale-"

func namespaceName(i int) string { return fmt.Sprintf("%s%02d", namespacePrefix, i) }

// namespaceNames are the run's namespaces.
func (r *runner) namespaceNames() []string {
	out := make([]string, r.o.namespaces)
	for i := range out {
		out[i] = namespaceName(i)
	}
	return out
}

// logf prints a progress line with the time since the run began.
func (r *runner) logf(format string, args ...any) {
	fmt.Printf("[%6.1fs] %s\n", time.Since(r.began).Seconds(), fmt.Sprintf(format, args...))
}

// progress prints a poll's status at most every 10 s, so a long wait shows
// where it is without flooding the output.
func (r *runner) progress(msg string) {
	if time.Since(r.lastProgress) >= 10*time.Second {
		r.lastProgress = time.Now()
		r.logf("  %s", msg)
	}
}

// summary is a distribution of durations in seconds.
type summary struct {
	N   int     `json:"n"`
	Min float64 `json:"min"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	Max float64 `json:"max"`
}

func summarize(xs []float64) summary {
	if len(xs) == 0 {
		return summary{}
	}
	slices.Sort(xs)
	q := func(p float64) float64 { return xs[min(len(xs)-1, int(p*float64(len(xs))))] }
	return summary{N: len(xs), Min: xs[0], P50: q(0.5), P90: q(0.9), Max: xs[len(xs)-1]}
}

func mib(kib int64) float64 { return float64(kib) / 1024 }
