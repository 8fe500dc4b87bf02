package policies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/download"
	"github.com/open-policy-agent/opa/v1/keys"
	"github.com/open-policy-agent/opa/v1/plugins"
	"github.com/open-policy-agent/opa/v1/plugins/rest"
)

// DefaultBundleSizeLimit is the default BundleSource.SizeLimitBytes: far
// above any policy set, far below what would hurt the controller.
const DefaultBundleSizeLimit = 64 << 20

// BundleSource is an OPA bundle served over HTTP(S) (OPA's bundle service
// API: GET with If-None-Match, a gzipped tarball in reply). Its modules are
// named "bundle/<Name>/<path in the bundle>".
type BundleSource struct {
	// Name identifies the bundle in module names, status and logs.
	Name string
	// URL is the bundle's full URL, e.g. https://bundles.example.com/org/claims.tar.gz.
	URL string
	// PollMin and PollMax bound the delay between polls (jittered), rounded
	// up to whole seconds; zero means OPA's defaults, 60s and 120s. After a
	// failure the downloader retries with backoff up to PollMax.
	PollMin, PollMax time.Duration
	// Token is sent as "Authorization: Bearer <Token>"; TokenFile is read
	// on every request instead (a mounted Secret that rotates). Optional.
	Token, TokenFile string
	// CACertFile is a PEM file of CAs to trust for an https URL besides the
	// system's. Optional.
	CACertFile string
	// PublicKey verifies the bundle's signature (.signatures.json): a PEM
	// public key, or the secret for HS256. Empty means no verification, and
	// then OPA refuses a signed bundle ("verification key not provided").
	PublicKey string
	// KeyID names the key; empty accepts whatever key id the signature
	// names, since only one key is configured.
	KeyID string
	// Algorithm of the signature; default RS256.
	Algorithm string
	// Scope, when set, must equal the scope the signature carries.
	Scope string
	// SizeLimitBytes bounds every file in the bundle (OPA's
	// size_limit_bytes); zero means DefaultBundleSizeLimit.
	SizeLimitBytes int64
	// TotalSizeLimitBytes bounds the whole bundle, as downloaded and as
	// unpacked; zero means DefaultBundleTotalSizeLimit.
	TotalSizeLimitBytes int64
	// DownloadTimeout bounds one download from request to last byte; zero
	// means DefaultBundleDownloadTimeout. A download that takes longer
	// fails: the last good bundle stays in use (Status is Stale), or,
	// before the first, every verdict is a denial.
	DownloadTimeout time.Duration
	// Trigger is "periodic" (the default) or "manual": manual bundles are
	// downloaded only by Engine.Reload.
	Trigger string
}

// bundleSource is one configured bundle and what was last downloaded.
type bundleSource struct {
	e   *Engine
	cfg BundleSource
	dl  *download.Downloader

	// Guarded by e.mu.
	current   contribution // the last good bundle
	notLoaded contribution // the failure contributed until the first load
	loaded    bool
	revision  string    // the manifest revision of current
	loadedAt  time.Time // when current was downloaded
	lastErr   error     // the last download's error; nil after a success
	lastErrAt time.Time
}

// newBundleSource validates a BundleSource and builds its downloader (not
// started yet).
func (e *Engine) newBundleSource(cfg BundleSource) (*bundleSource, error) {
	if cfg.Name == "" || strings.Contains(cfg.Name, "/") {
		return nil, fmt.Errorf("policies.bundles: name %q must be non-empty and without '/'", cfg.Name)
	}
	for _, other := range e.bundles {
		if other.cfg.Name == cfg.Name {
			return nil, fmt.Errorf("policies.bundles: name %q is used twice", cfg.Name)
		}
	}
	client, path, err := restClient(cfg, e)
	if err != nil {
		return nil, fmt.Errorf("policies.bundles[%s]: %w", cfg.Name, err)
	}
	dcfg, err := downloadConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("policies.bundles[%s]: %w", cfg.Name, err)
	}
	b := &bundleSource{
		e:         e,
		cfg:       cfg,
		notLoaded: loadingContribution("bundle/"+cfg.Name, fmt.Sprintf("bundle %s has not been loaded yet", cfg.Name)),
	}
	limit := cfg.SizeLimitBytes
	if limit <= 0 {
		limit = DefaultBundleSizeLimit
	}
	b.dl = download.New(dcfg, client, path).
		WithCallback(b.update).
		WithSizeLimitBytes(limit).
		WithBundleName(cfg.Name).
		WithBundleParserOpts(ast.ParserOptions{RegoVersion: ast.RegoV1})
	if cfg.PublicKey != "" {
		b.dl = b.dl.WithBundleVerificationConfig(verificationConfig(cfg))
	}
	return b, nil
}

// restClient builds OPA's REST client for the bundle's server and returns
// the path of the bundle on it.
func restClient(cfg BundleSource, e *Engine) (rest.Client, string, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return rest.Client{}, "", err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return rest.Client{}, "", fmt.Errorf("url %q is not an http(s) URL", cfg.URL)
	}
	svc := map[string]any{"name": cfg.Name, "url": u.Scheme + "://" + u.Host}
	switch {
	case cfg.TokenFile != "":
		svc["credentials"] = map[string]any{"bearer": map[string]any{"token_path": cfg.TokenFile}}
	case cfg.Token != "":
		svc["credentials"] = map[string]any{"bearer": map[string]any{"token": cfg.Token}}
	}
	if cfg.CACertFile != "" {
		svc["tls"] = map[string]any{"ca_cert": cfg.CACertFile}
	}
	raw, err := json.Marshal(svc)
	if err != nil {
		return rest.Client{}, "", err
	}
	logger := rest.Logger(newOPALogger(e.log, "bundle/"+cfg.Name))
	// The client OPA would build, whose auth plugin (token, TLS) the
	// bounded one wraps.
	inner, err := rest.New(raw, nil, rest.Name(cfg.Name), logger)
	if err != nil {
		return rest.Client{}, "", err
	}
	innerAuth, err := inner.Config().AuthPlugin(nil)
	if err != nil {
		return rest.Client{}, "", err
	}
	auth := &boundedAuth{
		inner: innerAuth, innerCfg: *inner.Config(), bundle: cfg.Name,
		limit: cfg.TotalSizeLimitBytes, timeout: cfg.DownloadTimeout,
	}
	if auth.limit <= 0 {
		auth.limit = DefaultBundleTotalSizeLimit
	}
	if auth.timeout <= 0 {
		auth.timeout = DefaultBundleDownloadTimeout
	}
	svc["credentials"] = map[string]any{"plugin": boundedAuthName}
	if raw, err = json.Marshal(svc); err != nil {
		return rest.Client{}, "", err
	}
	client, err := rest.New(raw, nil, rest.Name(cfg.Name), logger,
		rest.AuthPluginLookup(func(string) rest.HTTPAuthPlugin { return auth }))
	return client, strings.TrimPrefix(u.RequestURI(), "/"), err
}

func downloadConfig(cfg BundleSource) (download.Config, error) {
	trigger := plugins.TriggerPeriodic
	switch cfg.Trigger {
	case "", string(plugins.TriggerPeriodic):
	case string(plugins.TriggerManual):
		trigger = plugins.TriggerManual
	default:
		return download.Config{}, fmt.Errorf("trigger %q is neither periodic nor manual", cfg.Trigger)
	}
	c := download.Config{Trigger: &trigger}
	if cfg.PollMin > 0 || cfg.PollMax > 0 {
		lo, hi := seconds(cfg.PollMin), seconds(cfg.PollMax)
		if cfg.PollMax <= 0 {
			hi = 2 * lo
		}
		c.Polling.MinDelaySeconds, c.Polling.MaxDelaySeconds = &lo, &hi
	}
	return c, c.ValidateAndInjectDefaults()
}

// seconds rounds d up to whole seconds, at least one: OPA polls in seconds.
func seconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

func verificationConfig(cfg BundleSource) *bundle.VerificationConfig {
	kid := cfg.KeyID
	if kid == "" {
		kid = "claimwarden"
	}
	alg := cfg.Algorithm
	if alg == "" {
		alg = "RS256"
	}
	k := map[string]*keys.Config{kid: {Key: cfg.PublicKey, Algorithm: alg, Scope: cfg.Scope}}
	// Naming kid here makes OPA verify with this key whatever "kid" the
	// signature's header carries.
	return bundle.NewVerificationConfig(k, kid, cfg.Scope, nil)
}

func (b *bundleSource) manual() bool {
	return b.cfg.Trigger == string(plugins.TriggerManual)
}

func (b *bundleSource) start(ctx context.Context) { b.dl.Start(ctx) }

func (b *bundleSource) stop() { b.dl.Stop(context.Background()) }

// contribution is the last good bundle, or a failure until there is one:
// evaluating without an organisation's guardrails would be failing open.
func (b *bundleSource) contribution() contribution {
	if !b.loaded {
		return b.notLoaded
	}
	return b.current
}

// update is the downloader's callback, called once per download attempt.
// A failed download keeps the last good bundle (Status reports it stale);
// a new bundle replaces it and recompiles; 304 Not Modified only records
// that the server is reachable again.
func (b *bundleSource) update(ctx context.Context, u download.Update) error {
	if u.Error != nil {
		b.failed(u.Error)
		return nil // the downloader already returns u.Error
	}
	var c contribution
	if u.Bundle != nil {
		var err error
		if c, err = bundleContribution(b.cfg.Name, u.Bundle); err != nil {
			// Forget the ETag, or the next poll's 304 would look like
			// success while this bundle was refused.
			b.dl.SetCache("")
			b.failed(err)
			return err
		}
	}
	e := b.e
	e.mu.Lock()
	defer e.mu.Unlock()
	b.lastErr = nil
	if u.Bundle == nil {
		return nil
	}
	b.current, b.loaded = c, true
	b.revision, b.loadedAt = u.Bundle.Manifest.Revision, time.Now()
	e.recompileLocked(ctx)
	return nil
}

func (b *bundleSource) failed(err error) {
	b.e.mu.Lock()
	b.lastErr, b.lastErrAt = err, time.Now()
	b.e.mu.Unlock()
	b.e.log.Error(err, "policy bundle download failed; keeping the last good bundle", "bundle", b.cfg.Name)
}

// bundleContribution turns a downloaded bundle into modules named
// "bundle/<name>/<path>" and its data.
func bundleContribution(name string, b *bundle.Bundle) (contribution, error) {
	if b.Type() == bundle.DeltaBundleType {
		return contribution{}, errors.New("delta bundles are not supported")
	}
	if len(b.WasmModules) > 0 || len(b.PlanModules) > 0 {
		return contribution{}, errors.New("bundles with Wasm or plan modules are not supported")
	}
	mods := make([]module, 0, len(b.Modules))
	for _, m := range b.Modules {
		mods = append(mods, module{name: "bundle/" + name + "/" + strings.TrimPrefix(m.Path, "/"), text: string(m.Raw)})
	}
	return newContribution("bundle/"+name, mods, b.Data, ""), nil
}
