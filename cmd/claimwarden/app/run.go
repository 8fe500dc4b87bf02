package app

import (
	"fmt"
	"io"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/go-logr/logr"
	reportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	"github.com/spf13/cobra"
	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/integrations/argocd"
	"github.com/claimwarden/claimwarden/integrations/helm"
)

func newRunCommand(environ []string) *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the controller",
		Long: `Run the controller until SIGINT or SIGTERM.

Every setting is a flag, a key of the YAML file given with --config, and an
environment variable CLAIMWARDEN_<KEY> (upper case, dots as underscores, e.g.
CLAIMWARDEN_LEADERELECTION_ENABLED). A flag wins over the environment, the
environment over the file. Unknown keys and variables are errors.`,
		Args: cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command) error {
			cfg, err := config.Load(cmd.Flags(), configPath, environ)
			if err != nil {
				return err
			}
			return run(cmd, cfg)
		}),
	}
	cmd.Flags().StringVar(&configPath, "config", "", "path of a YAML configuration file")
	config.BindFlags(cmd.Flags())
	return cmd
}

// run starts the manager and its controllers and returns when the command's
// context is cancelled or the manager fails.
func run(cmd *cobra.Command, cfg config.Config) error {
	logger, err := newLogger(cfg.Log, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	ctrl.SetLogger(logger)
	// client-go (leader election, watches) logs through klog; route it to the same sink.
	klog.SetLogger(logger)

	restConfig, err := loadRESTConfig(cfg.Kubeconfig)
	if err != nil {
		return err
	}
	clientLimit := setClientRateLimit(cmd.Context(), restConfig, cfg)
	if err := checkPermissions(cmd.Context(), restConfig, cfg); err != nil {
		return err
	}
	opts, err := managerOptions(cfg)
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(restConfig, opts)
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	// The probes say the process serves; whether claims converge is reported
	// on the VolumeClaimRollouts, not by restarting the Pod.
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := setupControllers(cmd.Context(), mgr, cfg, logger); err != nil {
		return err
	}
	logger.Info("starting", "version", version(), "namespaces", cfg.Namespaces,
		"labelSelector", cfg.LabelSelector, "updateStrategy", cfg.UpdateStrategy,
		"leaderElection", cfg.LeaderElection.Enabled, "clientRateLimit", clientLimit)
	return mgr.Start(cmd.Context())
}

// newLogger builds controller-runtime's zap logger writing to w.
func newLogger(l config.Log, w io.Writer) (logr.Logger, error) {
	level, err := zapcore.ParseLevel(l.Level)
	if err != nil {
		return logr.Logger{}, fmt.Errorf("log.level: %w", err)
	}
	encoder := zap.JSONEncoder()
	if l.Format == "console" {
		encoder = zap.ConsoleEncoder()
	}
	// Many goroutines log at once; the lock keeps their lines whole.
	sink := zapcore.Lock(zapcore.AddSync(w))
	return zap.New(zap.WriteTo(sink), zap.Level(level), encoder), nil
}

// loadRESTConfig reads the kubeconfig at path, or the in-cluster configuration
// when path is empty.
func loadRESTConfig(path string) (*rest.Config, error) {
	var (
		c   *rest.Config
		err error
	)
	if path != "" {
		c, err = clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
		}
	} else {
		c, err = rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster configuration (set kubeconfig to run outside a cluster): %w", err)
		}
	}
	// The user agent tells claimwarden's requests apart in audit logs.
	c.UserAgent = "claimwarden/" + version()
	return c, nil
}

// byObject caches obj in namespaces (all when empty) whatever the
// StatefulSets' namespaces are.
func byObject(opts *ctrl.Options, obj client.Object, namespaces []string) {
	byNS := map[string]cache.Config{cache.AllNamespaces: {}}
	if len(namespaces) > 0 {
		byNS = namespaceConfigs(namespaces)
	}
	opts.Cache.ByObject[obj] = cache.ByObject{Namespaces: byNS}
}

// namespaceConfigs is the cache configuration of namespaces, each with the
// defaults.
func namespaceConfigs(namespaces []string) map[string]cache.Config {
	byNS := make(map[string]cache.Config, len(namespaces))
	for _, ns := range namespaces {
		byNS[ns] = cache.Config{}
	}
	return byNS
}

// managerOptions turns the configuration into controller-runtime manager options.
func managerOptions(cfg config.Config) (ctrl.Options, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return ctrl.Options{}, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return ctrl.Options{}, err
	}
	if err := kustomizev1.AddToScheme(scheme); err != nil {
		return ctrl.Options{}, err
	}
	if err := sourcev1.AddToScheme(scheme); err != nil {
		return ctrl.Options{}, err
	}
	if err := helmv2.AddToScheme(scheme); err != nil {
		return ctrl.Options{}, err
	}
	if err := reportsv1alpha1.Install(scheme); err != nil {
		return ctrl.Options{}, err
	}
	opts := ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: cfg.MetricsAddr},
		PprofBindAddress:        cfg.PprofAddr,
		HealthProbeBindAddress:  cfg.HealthAddr,
		LeaderElection:          cfg.LeaderElection.Enabled,
		LeaderElectionNamespace: cfg.LeaderElection.Namespace,
		LeaderElectionID:        cfg.LeaseID(),
		// Hand the Lease over at once on shutdown (rolling updates) instead of
		// making the next replica wait out the lease; safe because the process
		// exits as soon as the manager returns.
		LeaderElectionReleaseOnCancel: true,
		// Nothing reads managedFields from the cache (they are most of a
		// PVC's or StatefulSet's bytes): the convergence, which asks who
		// created a StatefulSet, reads through the API reader on purpose.
		Cache: cache.Options{
			DefaultTransform: cache.TransformStripManagedFields(),
			ByObject:         map[client.Object]cache.ByObject{},
		},
	}
	if len(cfg.Namespaces) > 0 {
		// Watch and cache namespaced objects of the configured namespaces only:
		// less memory, and no events from namespaces claimwarden must not touch.
		opts.Cache.DefaultNamespaces = namespaceConfigs(cfg.Namespaces)
	}
	// Kustomizations and Applications live in their own namespaces
	// (flux-system, argocd, ...), not in those of the StatefulSets.
	if cfg.Flux.Enabled && (len(cfg.Namespaces) > 0 || len(cfg.Flux.Namespaces) > 0) {
		byObject(&opts, &kustomizev1.Kustomization{}, cfg.Flux.Namespaces)
	}
	if cfg.ArgoCD.Enabled && (len(cfg.Namespaces) > 0 || len(cfg.ArgoCD.Namespaces) > 0) {
		app := &unstructured.Unstructured{}
		app.SetGroupVersionKind(argocd.ApplicationGVK)
		byObject(&opts, app, cfg.ArgoCD.Namespaces)
	}
	if cfg.Helm.Enabled {
		obj, by := helm.CacheCLIReleases(cfg.Helm.Namespaces)
		opts.Cache.ByObject[obj] = by
	}
	return opts, nil
}
