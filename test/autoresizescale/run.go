package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/benchkit"
	"github.com/claimwarden/claimwarden/test/controllerproc"
	giteasrv "github.com/claimwarden/claimwarden/test/gitea"
	"github.com/claimwarden/claimwarden/test/promenv"
	"github.com/claimwarden/claimwarden/test/storagesim"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// controllerNamespace holds the Git host token's Secret.
const controllerNamespace = "claimwarden-system"

// bench is what the run started.
type bench struct {
	o     options
	began time.Time
	dir   string
	bin   string
	env   *testenv.Env
	c     client.Client
	prom  *promenv.Server
	git   *giteasrv.Server
	proxy *countingProxy
	ctl   *controllerproc.Process
	fleet []member
	// lastProgress is when progress last printed.
	lastProgress time.Time
}

// run starts everything, measures, prints, and always stops what it started.
func run(ctx context.Context, o options) (err error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	b := &bench{o: o, began: time.Now()}
	w, err := benchkit.NewWorkdir(ctx, "autoresizescale", o.controller, b.logf)
	if err != nil {
		return err
	}
	defer func() { w.Close(err != nil) }()
	root := w.Root
	b.dir, b.bin = w.Dir, w.Bin
	var stops []func() error
	defer func() {
		b.logf("stopping what the run started")
		for _, stop := range slices.Backward(stops) {
			err = errors.Join(err, stop())
		}
	}()
	b.logf("starting the control plane, the storage simulator, Prometheus and Gitea")
	if stop, err := b.start(ctx, root); err != nil {
		stops = append(stops, stop)
		return err
	} else {
		stops = append(stops, stop)
	}
	b.logf("creating %d StatefulSets × %d claims in %d namespaces from %d repositories", o.statefulSets, o.claims, o.namespaces, o.repositories)
	if err := b.createFleet(ctx); err != nil {
		return err
	}
	b.logf("starting claimwarden (autoresize every %s)", o.interval)
	if err := b.startController(ctx); err != nil {
		return err
	}
	stops = append(stops, func() error { return b.ctl.Shutdown(30 * time.Second) })
	rep, err := b.measure(ctx)
	if err != nil {
		return err
	}
	rep.print(os.Stdout, o, b.bin)
	return nil
}

// start starts the control plane with kwok, the storage simulator and its
// volume statistics, Prometheus scraping them, and Gitea behind the
// counting proxy; stop stops them.
func (b *bench) start(ctx context.Context, root string) (stop func() error, err error) {
	var stops []func() error
	stop = func() error {
		var errs []error
		for _, s := range slices.Backward(stops) {
			errs = append(errs, s())
		}
		return errors.Join(errs...)
	}
	bin, err := testenv.BinDir()
	if err != nil {
		return stop, err
	}
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	b.env, err = testenv.Start(startCtx, testenv.Options{
		Kwok: true, ClientQPS: 200,
		CRDDirs: []string{filepath.Join(root, "config", "crd", "bases"), filepath.Join(bin, "flux-crds")},
	})
	if err != nil {
		return stop, fmt.Errorf("the control plane: %w", err)
	}
	stops = append(stops, b.env.Stop)
	if b.c, err = client.New(b.env.Config, client.Options{Scheme: scheme()}); err != nil {
		return stop, err
	}
	for _, o := range []client.Object{
		storagesim.StorageClass(storageClass, true),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: controllerNamespace}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fluxNamespace}},
	} {
		if err := b.c.Create(ctx, o); err != nil {
			return stop, err
		}
	}
	sim := &storagesim.Simulator{Delay: time.Second}
	simCtx, simCancel := context.WithCancel(context.WithoutCancel(ctx))
	simDone := make(chan error, 1)
	go func() { simDone <- sim.Start(simCtx, b.env.Config) }()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		simCancel()
		return stop, err
	}
	stats := &http.Server{Handler: sim.MetricsHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = stats.Serve(l) }()
	stops = append(stops, func() error {
		_ = stats.Close()
		simCancel()
		return <-simDone
	})
	if b.prom, err = promenv.Start(filepath.Join(b.dir, "prometheus"), 5*time.Second, l.Addr().String()); err != nil {
		return stop, err
	}
	stops = append(stops, b.prom.Stop)
	if b.git, err = giteasrv.Start(ctx, filepath.Join(b.dir, "gitea")); err != nil {
		return stop, err
	}
	stops = append(stops, b.git.Stop)
	if b.proxy, err = startCountingProxy(b.git.URL); err != nil {
		return stop, err
	}
	stops = append(stops, func() error { b.proxy.close(); return nil })
	return stop, nil
}

// startController runs the claimwarden binary with Flux's Kustomizations
// and autoresize on every namespace, the Git host reached through the
// counting proxy, as the control plane's admin (the run measures requests,
// which RBAC does not change).
func (b *bench) startController(ctx context.Context) error {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: controllerNamespace, Name: "gitea-write"}, StringData: map[string]string{"token": b.git.Token}}
	if err := b.c.Create(ctx, secret); err != nil {
		return err
	}
	config := filepath.Join(b.dir, "config.yaml")
	body := fmt.Sprintf(`autoresize:
  interval: %s
  window: 1m
  prometheus: {url: %s}
  namespaces:
  - {namespace: "*", repositoryPrefixes: ["%s/%s"], allStatefulSets: true}
  hosts:
  - {url: %s, type: gitea, tokenSecretRef: {namespace: %s, name: %s}}
`, b.o.interval, b.prom.URL, b.proxy.url, b.git.User, b.proxy.url, controllerNamespace, secret.Name)
	if err := os.WriteFile(config, []byte(body), 0o600); err != nil {
		return err
	}
	kubeconfig := filepath.Join(b.dir, "claimwarden.kubeconfig")
	if err := testenv.WriteKubeconfig(kubeconfig, b.env.Config); err != nil {
		return err
	}
	var err error
	b.ctl, err = controllerproc.Start(controllerproc.Options{
		Name: "claimwarden", Binary: b.bin, Kubeconfig: kubeconfig, Log: filepath.Join(b.dir, "claimwarden.log"), LogFormat: "json", Metrics: true,
		ExtraArgs: []string{"--config", config, "--flux", "--flux-artifact-cache-dir", filepath.Join(b.dir, "artifacts")},
	})
	if err != nil {
		return err
	}
	return b.ctl.WaitReady(ctx, 5*time.Minute)
}

// scheme knows the built-in kinds, VolumeClaimRollouts and Flux's objects.
func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme, kustomizev1.AddToScheme, sourcev1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err) // the generated schemes always register
		}
	}
	return s
}

// logf prints a progress line with the time since the run began.
func (b *bench) logf(format string, args ...any) {
	fmt.Printf("[%6.1fs] %s\n", time.Since(b.began).Seconds(), fmt.Sprintf(format, args...))
}

// progress is logf at most every 15 s.
func (b *bench) progress(format string, args ...any) {
	if time.Since(b.lastProgress) < 15*time.Second {
		return
	}
	b.lastProgress = time.Now()
	b.logf(format, args...)
}
