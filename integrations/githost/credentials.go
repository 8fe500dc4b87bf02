package githost

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

// defaultSecretWait bounds how long HostFor waits for the Secrets to be
// read from the API server. It is below the status Reporter's post timeout: a
// worker is held no longer than one slow post would hold it.
const defaultSecretWait = 10 * time.Second

// Credentials resolves the Git host of a repository with credentials read
// from Secrets. The Secrets are watched, so a rotated token is used from the
// next call on (a status, a pull request), without a restart.
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
// for an auxiliary feature would stop the whole controller. Instead HostFor
// fails with an error saying what could not be read (a status is dropped, a
// check waits for the next interval).
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
	// watchErr is the last error listing or watching Secrets, for the
	// message of a Secret that could not be read in time (typically RBAC).
	watchErr error
}

type secretName struct{ namespace, name string }

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
	}
	namespaces := map[string]cache.Config{}
	for i, h := range c.hosts {
		if _, err := parseBaseURL(h.URL); err != nil {
			return nil, err
		}
		if !slices.Contains(HostTypes(), h.Type) {
			return nil, fmt.Errorf("git host %s: type %q is not one of %s", proposal.RedactURL(h.URL), h.Type, JoinHostTypes())
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

// HostFor returns repo's Git host with the credential its Secret holds
// now: a rotated token is used from the next call on. Errors name the host
// and the Secret key, never its value.
func (c *Credentials) HostFor(repo Repository) (Host, error) {
	cred, err := c.CredentialFor(repo)
	return cred.Host, err
}

// Credential is a configured host with the credential its Secret holds.
type Credential struct {
	// Host carries the credential: Token, or GitHubApp's private key.
	Host Host
	// Secret is the Secret key the credential was read from.
	Secret SecretRef
	// ResourceVersion is the Secret's: a client built from Host may be
	// reused while it is unchanged.
	ResourceVersion string
	value           []byte
}

// Explain returns err, an error of building a client from c.Host, naming
// the Secret key the credential came from and with the credential
// scrubbed: a constructor's error might quote what it was given, and these
// errors are logged.
func (c Credential) Explain(err error) error {
	return scrubError(fmt.Errorf("%w (credential from %s)", err, c.Secret), string(c.value), c.Host.Token)
}

// CredentialFor is HostFor with where the credential came from.
func (c *Credentials) CredentialFor(repo Repository) (Credential, error) {
	h, ok := ResolveHost(repo, c.resolve)
	i, configured := c.byURL[h.URL]
	if !ok || !configured {
		// ResolveHost knows github.com, gitlab.com and bitbucket.org
		// without configuration, but not their credentials.
		return Credential{}, fmt.Errorf("no Git host is configured for %s (repository %s/%s): add it to %s with its credentials", repo.Host, repo.Host, repo.Path, c.configKey())
	}
	hc := c.hosts[i]
	ref := hc.ref()
	host := proposal.RedactURL(hc.URL)

	secret, err := c.secret(ref)
	if err != nil {
		return Credential{}, fmt.Errorf("git host %s: reading %s: %w", host, ref, err)
	}
	value := secret.Data[ref.Key]
	if len(value) == 0 {
		if _, present := secret.Data[ref.Key]; present {
			return Credential{}, fmt.Errorf("git host %s: %s is empty", host, ref)
		}
		return Credential{}, fmt.Errorf("git host %s: %s does not exist: the Secret has no such key", host, ref)
	}
	h = Host{URL: hc.URL, Type: hc.Type}
	if hc.App != nil {
		h.GitHubApp = &GitHubApp{AppID: hc.App.AppID, InstallationID: hc.App.InstallationID, PrivateKey: value}
	} else {
		// `kubectl create secret --from-file` keeps the file's final newline,
		// which no token has and no HTTP header may carry.
		h.Token = strings.TrimSpace(string(value))
	}
	return Credential{Host: h, Secret: ref, ResourceVersion: secret.ResourceVersion, value: value}, nil
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
		// Start runs concurrently with the first callers (the status
		// Reporter's posts), and the cache refuses reads until it runs: a
		// call is not refused for being early.
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
// error whose text has them replaced: a client's error might quote what it
// was given, and these errors are logged.
func scrubError(err error, secrets ...string) error {
	if msg := scrubSecrets(err.Error(), secrets); msg != err.Error() {
		return errors.New(msg)
	}
	return err
}
