package gitstatus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/claimwarden/claimwarden/reconciler/proposal"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// SecretRef names one key of a Secret.
type SecretRef struct{ Namespace, Name, Key string }

// String names the Secret key in messages: "Secret ns/name key "token"".
func (r SecretRef) String() string {
	return fmt.Sprintf("Secret %s/%s key %q", r.Namespace, r.Name, r.Key)
}

// AppConfig is a GitHub App installation whose private key is in a Secret.
type AppConfig struct {
	AppID, InstallationID int64
	PrivateKey            SecretRef
}

// HostConfig is a Git host whose credentials are in a Secret: exactly one of
// Token and App is set.
type HostConfig struct {
	URL   string
	Type  HostType
	Token *SecretRef
	App   *AppConfig
}

// ref is the Secret key holding h's credential.
func (h HostConfig) ref() SecretRef {
	if h.App != nil {
		return h.App.PrivateKey
	}
	return *h.Token
}

// defaultSecretWait bounds how long ProviderFor waits for the Secrets to be
// read from the API server. It is below the Reporter's post timeout: a
// worker is held no longer than one slow post would hold it.
const defaultSecretWait = 10 * time.Second

// Credentials resolves the Provider of a repository with credentials read
// from Secrets. The Secrets are watched, so a rotated token is used from the
// next status on, without a restart.
//
// Only the namespaces the references name are watched, never the whole
// cluster: the controller needs get, list and watch on Secrets in those
// namespaces and nothing more. A Secret cannot be watched by a list of
// names (a field selector matches one name), so every Secret of those
// namespaces is cached, but stripped of the data no reference names: the
// controller's memory holds the credentials it uses and no others.
//
// Credentials is a manager.Runnable that runs on every replica (it needs no
// leader election), so that a replica that becomes leader reads warm Secrets.
// It deliberately does not offer its cache to the manager: the manager would
// then wait for it before starting the controllers, and a missing RBAC rule
// for an auxiliary feature would stop the whole controller. Instead a status
// is dropped with an error saying what could not be read.
type Credentials struct {
	// ConfigKey names, in errors, the configuration list the hosts come
	// from; "" is gitStatus.hosts.
	ConfigKey string

	hosts   []HostConfig
	resolve []Host         // hosts as ResolveHost takes them: URL and Type only
	byURL   map[string]int // index in hosts by URL
	cache   cache.Cache    // nil without hosts
	wait    time.Duration  // see defaultSecretWait; tests shorten it
	refKeys map[secretName][]string

	mu sync.Mutex
	// built caches one Provider per host with the resourceVersion of the
	// Secret it was built from: a post does not rebuild it, a changed Secret
	// does.
	built map[int]builtProvider
	// watchErr is the last error listing or watching Secrets, for the
	// message of a Secret that could not be read in time (typically RBAC).
	watchErr error
}

type secretName struct{ namespace, name string }

type builtProvider struct {
	resourceVersion string
	provider        Provider
}

var (
	_ manager.Runnable               = (*Credentials)(nil)
	_ manager.LeaderElectionRunnable = (*Credentials)(nil)
)

// NewCredentials returns Credentials for hosts, reading Secrets through cfg.
// scheme must know core/v1 Secrets; nil means client-go's scheme. Nothing is
// read until Start runs.
func NewCredentials(cfg *rest.Config, scheme *runtime.Scheme, hosts []HostConfig) (*Credentials, error) {
	if scheme == nil {
		scheme = clientgoscheme.Scheme
	}
	c := &Credentials{
		hosts:   slices.Clone(hosts),
		byURL:   map[string]int{},
		wait:    defaultSecretWait,
		refKeys: map[secretName][]string{},
		built:   map[int]builtProvider{},
	}
	namespaces := map[string]cache.Config{}
	for i, h := range c.hosts {
		if _, err := parseBaseURL(h.URL); err != nil {
			return nil, err
		}
		if !slices.Contains(HostTypes(), h.Type) {
			return nil, fmt.Errorf("git host %s: type %q is not one of %s", proposal.RedactURL(h.URL), h.Type, joinHostTypes())
		}
		if (h.Token == nil) == (h.App == nil) {
			return nil, fmt.Errorf("git host %s: set exactly one of a token and a GitHub App", proposal.RedactURL(h.URL))
		}
		if _, dup := c.byURL[h.URL]; dup {
			return nil, fmt.Errorf("git host %s is configured twice", proposal.RedactURL(h.URL))
		}
		ref := h.ref()
		if ref.Namespace == "" || ref.Name == "" || ref.Key == "" {
			return nil, fmt.Errorf("git host %s: %s: namespace, name and key are all required", proposal.RedactURL(h.URL), ref)
		}
		c.byURL[h.URL] = i
		c.resolve = append(c.resolve, Host{URL: h.URL, Type: h.Type})
		sn := secretName{ref.Namespace, ref.Name}
		c.refKeys[sn] = append(c.refKeys[sn], ref.Key)
		namespaces[ref.Namespace] = cache.Config{}
	}
	if len(namespaces) == 0 {
		// An empty DefaultNamespaces would watch every namespace.
		return c, nil
	}

	var err error
	c.cache, err = cache.New(cfg, cache.Options{
		Scheme:            scheme,
		DefaultNamespaces: namespaces,
		// Only Secrets are read; asking for anything else is a bug, not a
		// reason to start watching it.
		ReaderFailOnMissingInformer: true,
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Transform: c.strip},
		},
		DefaultWatchErrorHandler: func(ctx context.Context, r *toolscache.Reflector, err error) {
			c.mu.Lock()
			c.watchErr = err
			c.mu.Unlock()
			toolscache.DefaultWatchErrorHandler(ctx, r, err)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("git status credentials: %w", err)
	}
	// Registering the informer now makes Start run it; the cache is not
	// started, so this returns at once.
	if _, err := c.cache.GetInformer(context.Background(), &corev1.Secret{}); err != nil {
		return nil, fmt.Errorf("git status credentials: %w", err)
	}
	return c, nil
}

// Namespaces returns the namespaces whose Secrets are watched, sorted: the
// controller's RBAC must allow get, list and watch on Secrets in each.
func (c *Credentials) Namespaces() []string {
	var out []string
	for sn := range c.refKeys {
		if !slices.Contains(out, sn.namespace) {
			out = append(out, sn.namespace)
		}
	}
	slices.Sort(out)
	return out
}

// NeedLeaderElection is false: standby replicas keep the Secrets warm.
func (c *Credentials) NeedLeaderElection() bool { return false }

// Start runs the Secret cache until ctx is done.
func (c *Credentials) Start(ctx context.Context) error {
	if c.cache == nil {
		<-ctx.Done()
		return nil
	}
	return c.cache.Start(ctx)
}

// strip is the cache's transform: it drops the data of Secrets no reference
// names and, of the others, every key but the referenced ones, along with
// the managed fields. It keeps the resourceVersion, which tells a changed
// credential apart.
func (c *Credentials) strip(obj any) (any, error) {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return obj, nil
	}
	s.ManagedFields = nil
	s.Annotations = nil // kubectl's last-applied-configuration may hold the data
	s.StringData = nil
	keys := c.refKeys[secretName{s.Namespace, s.Name}]
	for k := range s.Data {
		if !slices.Contains(keys, k) {
			delete(s.Data, k)
		}
	}
	return s, nil
}

// ProviderFor returns the Provider posting repo's statuses, with the
// credential the Secret holds now: a rotated token is used from the next
// post on. Errors name the host and the Secret key, never its value.
func (c *Credentials) ProviderFor(repo Repository) (Provider, error) {
	cred, err := c.credential(repo)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	b, ok := c.built[cred.index]
	c.mu.Unlock()
	if ok && b.resourceVersion == cred.resourceVersion {
		return b.provider, nil
	}
	p, err := NewProvider(cred.host, nil)
	if err != nil {
		return nil, scrubError(fmt.Errorf("%w (credential from %s)", err, cred.ref), string(cred.value), cred.host.Token)
	}
	c.mu.Lock()
	c.built[cred.index] = builtProvider{resourceVersion: cred.resourceVersion, provider: p}
	c.mu.Unlock()
	return p, nil
}

// HostFor returns repo's Git host with the credential its Secret holds
// now, for other APIs of the host than statuses (autoresize's pull
// requests). Errors name the host and the Secret key, never its value.
func (c *Credentials) HostFor(repo Repository) (Host, error) {
	cred, err := c.credential(repo)
	return cred.host, err
}

// credential is a configured host's credential as its Secret holds it now.
type credential struct {
	index           int // in c.hosts
	host            Host
	ref             SecretRef
	value           []byte
	resourceVersion string
}

func (c *Credentials) credential(repo Repository) (credential, error) {
	h, ok := ResolveHost(repo, c.resolve)
	i, configured := c.byURL[h.URL]
	if !ok || !configured {
		// ResolveHost knows github.com, gitlab.com and bitbucket.org
		// without configuration, but not their credentials.
		return credential{}, fmt.Errorf("no Git host is configured for %s (repository %s/%s): add it to %s with its credentials", repo.Host, repo.Host, repo.Path, c.configKey())
	}
	hc := c.hosts[i]
	ref := hc.ref()
	host := proposal.RedactURL(hc.URL)

	secret, err := c.secret(ref)
	if err != nil {
		return credential{}, fmt.Errorf("git host %s: reading %s: %w", host, ref, err)
	}
	value := secret.Data[ref.Key]
	if len(value) == 0 {
		if _, present := secret.Data[ref.Key]; present {
			return credential{}, fmt.Errorf("git host %s: %s is empty", host, ref)
		}
		return credential{}, fmt.Errorf("git host %s: %s does not exist: the Secret has no such key", host, ref)
	}
	h = Host{URL: hc.URL, Type: hc.Type}
	if hc.App != nil {
		h.GitHubApp = &GitHubApp{AppID: hc.App.AppID, InstallationID: hc.App.InstallationID, PrivateKey: value}
	} else {
		// `kubectl create secret --from-file` keeps the file's final newline,
		// which no token has and no HTTP header may carry.
		h.Token = strings.TrimSpace(string(value))
	}
	return credential{index: i, host: h, ref: ref, value: value, resourceVersion: secret.ResourceVersion}, nil
}

func (c *Credentials) configKey() string {
	if c.ConfigKey != "" {
		return c.ConfigKey
	}
	return "gitStatus.hosts"
}

// secret reads the Secret ref names from the cache, waiting at most c.wait
// for the cache to start and to have read the Secrets of ref's namespace.
func (c *Credentials) secret(ref SecretRef) (*corev1.Secret, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.wait)
	defer cancel()
	var s corev1.Secret
	var err error
	for {
		err = c.cache.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &s)
		// Start runs concurrently with the Reporter's first posts, and the
		// cache refuses reads until it runs: a status is not dropped for
		// being early.
		if !errors.As(err, new(*cache.ErrCacheNotStarted)) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, errors.New("the Secrets are not watched: the credentials were not started")
		case <-time.After(50 * time.Millisecond):
		}
	}
	switch {
	case err == nil:
		return &s, nil
	case apierrors.IsNotFound(err):
		return nil, errors.New("the Secret does not exist")
	case ctx.Err() != nil || apierrors.IsTimeout(err):
		c.mu.Lock()
		last := c.watchErr
		c.mu.Unlock()
		msg := fmt.Sprintf("the Secrets of namespace %s were not read within %s: the controller needs get, list and watch on Secrets there", ref.Namespace, c.wait)
		if last != nil {
			msg += " (last error: " + last.Error() + ")"
		}
		return nil, errors.New(msg)
	}
	return nil, err
}

// scrubError returns err, or when its text holds one of the secrets, an
// error whose text has them replaced: a provider's error might quote what it
// was given, and these errors are logged.
func scrubError(err error, secrets ...string) error {
	if msg := scrubSecrets(err.Error(), secrets); msg != err.Error() {
		return errors.New(msg)
	}
	return err
}
