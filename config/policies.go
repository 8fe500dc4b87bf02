package config

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Defaults and bounds of the policies keys. They repeat the engine's own
// defaults (package policies) because config does not import the engine: the
// cmd package maps Policies onto it.
const (
	DefaultPolicyPollInterval = 10 * time.Second
	DefaultPolicyTimeout      = time.Second
	// MaxPolicyTimeout bounds policies.timeout: every claim change waits for
	// its verdict inside a reconcile, so a longer evaluation would stall the
	// StatefulSet's queue rather than protect anything.
	MaxPolicyTimeout = time.Minute
)

// Policies configures the Open Policy Agent (Rego) policies the controller
// asks before every claim change. The shipped policies always apply; Dirs,
// the policy ConfigMaps and Bundles add to them.
type Policies struct {
	// Dirs are directories (or single files) of .rego policies and .json/.yaml
	// data, read in addition to the shipped policies. Hidden entries (a mounted
	// ConfigMap's ..data) and *_test.rego files are skipped. A directory that
	// cannot be read or a policy that does not compile makes every verdict a
	// denial naming it: the organisation's rules being unknown, changes stop.
	// In the environment the paths are separated by commas; the flag
	// --policy-dir may be repeated.
	Dirs []string `mapstructure:"dirs"`

	// PollInterval is how often Dirs are re-read, so that a changed file (an
	// updated ConfigMap volume) applies without a restart; default 10s.
	PollInterval time.Duration `mapstructure:"pollInterval"`

	// Timeout bounds one evaluation of the policies; default 1s, at most 1m.
	// An evaluation that times out denies the change.
	Timeout time.Duration `mapstructure:"timeout"`

	// ValueLimitBytes bounds every string or collection a policy builds with
	// a builtin that can outgrow its arguments (concat, sprintf, replace,
	// array.concat, json.marshal, ...): a call whose result would be larger
	// is an error, which denies the change. Zero means the engine's default
	// (16 MiB). File only.
	ValueLimitBytes int64 `mapstructure:"valueLimitBytes"`

	// MemoryBudgetBytes bounds the heap the policy evaluations running at
	// once may grow by, together: past it they are stopped, which denies
	// their changes (fail closed). Zero means the engine's default
	// (128 MiB), which keeps the shipped Deployment inside its 512Mi.
	MemoryBudgetBytes int64 `mapstructure:"memoryBudgetBytes"`

	// AllowNetworkBuiltins lets policies call the builtins that reach the
	// network (http.send, net.*, opa.runtime, the JSON-schema builtins that
	// fetch remote $refs). Off by default: a policy calling one does not
	// compile, so verdicts depend only on the change and the policy data.
	AllowNetworkBuiltins bool `mapstructure:"allowNetworkBuiltins"`

	// ConfigMaps turns on reading policies from the ConfigMaps labelled
	// claimwarden.dev/policy=true in ConfigMapNamespace (the default): each
	// key ending in .rego is a policy, .json/.yaml keys are data.
	ConfigMaps bool `mapstructure:"configMaps"`

	// ConfigMapNamespace holds the policy ConfigMaps. Default: the namespace
	// of the Pod the controller runs in, or "claimwarden-system" outside a
	// Pod. The shipped RBAC lets the controller read ConfigMaps in its own
	// namespace only.
	ConfigMapNamespace string `mapstructure:"configMapNamespace"`

	// Bundles are OPA bundles downloaded from bundle servers (OPA's bundle
	// service API) and polled for new revisions. Until a bundle has been
	// downloaded once, every verdict is a denial: evaluating without an
	// organisation's guardrails would be failing open. File only.
	Bundles []Bundle `mapstructure:"bundles"`

	// Params are visible to policies as data.claimwarden.params (and
	// input.params), e.g. max_step_percent: 50 or disabled: [class-must-match].
	// Any keys and values are accepted, provided they can be encoded as JSON.
	// The configuration file's keys are case-insensitive, so parameter names
	// are read in lower case (maxStep becomes maxstep): spell them in
	// snake_case, as the shipped policies do. Null values and names holding
	// dots are kept as written. File only.
	Params map[string]any `mapstructure:"params"`

	// DecisionLogs sends every verdict through OPA's decision-log plugin. It
	// is OPA configuration as OPA's own configuration file spells it: a
	// "decision_logs" object and the "services" (and optionally "labels") it
	// refers to. Its keys are read in lower case like every key of this file,
	// which OPA's snake_case keys and HTTP header names tolerate. Empty (the
	// default) sends no decision logs. File only.
	DecisionLogs map[string]any `mapstructure:"decisionLogs"`

	// DecisionLogMask lists JSON pointers into every decision-log event that
	// OPA's masking removes before the event leaves the controller, e.g.
	// /input/source/repository or /input/statefulSet/spec/template; they
	// must start with /input, /result or /nd_builtin_cache. Empty masks
	// nothing.
	DecisionLogMask []string `mapstructure:"decisionLogMask"`
}

// Bundle is an OPA bundle served over HTTP(S). Its policies are named
// "bundle/<name>/<path in the bundle>" in verdicts and status.
type Bundle struct {
	// Name identifies the bundle in policy names, status and logs: a DNS-1123
	// label, unique among the bundles. Required.
	Name string `mapstructure:"name"`

	// URL is the bundle's full http or https URL, e.g.
	// https://bundles.example.com/org/claims.tar.gz. Required.
	URL string `mapstructure:"url"`

	// PollMin and PollMax bound the delay between downloads (jittered,
	// rounded up to whole seconds). Zero means OPA's defaults, 60s and 120s;
	// with only PollMin set, PollMax is twice PollMin. After a failure the
	// download is retried with backoff up to PollMax.
	PollMin time.Duration `mapstructure:"pollMin"`
	PollMax time.Duration `mapstructure:"pollMax"`

	// TokenFile holds a bearer token sent with every request; it is read on
	// every request, so a mounted Secret may rotate. Optional.
	TokenFile string `mapstructure:"tokenFile"`

	// CACertFile is a PEM file of certificate authorities trusted for an https
	// URL besides the system's. Optional.
	CACertFile string `mapstructure:"caCertFile"`

	// PublicKeyFile holds the key verifying the bundle's signature
	// (.signatures.json): a PEM public key or certificate, or the shared
	// secret for the HS algorithms. Without it signatures are not verified,
	// and OPA refuses a signed bundle. Optional.
	PublicKeyFile string `mapstructure:"publicKeyFile"`

	// KeyID names the key; empty accepts whatever key id the signature names,
	// since only one key is configured. Needs PublicKeyFile.
	KeyID string `mapstructure:"keyID"`

	// Algorithm of the signature: RS256 (the default when empty), RS384,
	// RS512, PS256, PS384, PS512, ES256, ES384, ES512, HS256, HS384 or HS512.
	// Needs PublicKeyFile.
	Algorithm string `mapstructure:"algorithm"`

	// Scope, when set, must equal the scope the signature carries. Needs
	// PublicKeyFile.
	Scope string `mapstructure:"scope"`

	// SizeLimitBytes bounds every file of the bundle; zero means the engine's
	// default (64 MiB).
	SizeLimitBytes int64 `mapstructure:"sizeLimitBytes"`

	// TotalSizeLimitBytes bounds the whole bundle, downloaded and unpacked;
	// zero means the engine's default (64 MiB).
	TotalSizeLimitBytes int64 `mapstructure:"totalSizeLimitBytes"`

	// DownloadTimeout bounds one download, from request to last byte; zero
	// means the engine's default (60s). On expiry the last good bundle stays
	// in use.
	DownloadTimeout time.Duration `mapstructure:"downloadTimeout"`

	// Trigger is "periodic" (the default when empty) or "manual": a manual
	// bundle is downloaded only when the policies are reloaded on request.
	Trigger string `mapstructure:"trigger"`
}

// decisionLogMaskPointer is what OPA's decision-log masking can remove.
var decisionLogMaskPointer = regexp.MustCompile(`^/(input|result|nd_builtin_cache)(/[^/]+)*$`)

// Allowed values, in the order error messages list them.
var (
	bundleAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "HS256", "HS384", "HS512"}
	bundleTriggers   = []string{"", "periodic", "manual"}
)

// defaultPolicies returns the policies configuration used where nothing is
// set; podNS is the default ConfigMapNamespace.
func defaultPolicies(podNS string) Policies {
	return Policies{
		PollInterval:       DefaultPolicyPollInterval,
		Timeout:            DefaultPolicyTimeout,
		ConfigMaps:         true,
		ConfigMapNamespace: podNS,
	}
}

// validate reports every invalid policies value through bad, as Validate does.
func (p Policies) validate(bad func(key string, value any, format string, args ...any)) {
	p.validateEngine(bad)
	firstWithName := map[string]int{}
	for i, b := range p.Bundles {
		key := func(field string) string { return fmt.Sprintf("policies.bundles[%d].%s", i, field) }
		if problems := validation.IsDNS1123Label(b.Name); len(problems) > 0 {
			bad(key("name"), b.Name, "is not a bundle name: %s", strings.Join(problems, "; "))
		} else if first, ok := firstWithName[b.Name]; ok {
			bad(key("name"), b.Name, "is also the name of policies.bundles[%d]", first)
		} else {
			firstWithName[b.Name] = i
		}
		b.validateDownload(key, bad)
		b.validateFiles(key, bad)
	}
	p.validateOPA(bad)
}

// validateEngine checks where the engine reads policies from, how often,
// and how long an evaluation may take.
func (p Policies) validateEngine(bad func(key string, value any, format string, args ...any)) {
	for _, dir := range p.Dirs {
		// An empty entry is a stray comma (CLAIMWARDEN_POLICIES_DIRS=a,,b):
		// refusing it beats guessing what OPA's loader would make of "".
		if dir == "" {
			bad("policies.dirs", dir, "is not a path")
		}
	}
	if p.PollInterval <= 0 {
		bad("policies.pollInterval", p.PollInterval, "is not positive")
	}
	if p.Timeout <= 0 {
		bad("policies.timeout", p.Timeout, "is not positive")
	} else if p.Timeout > MaxPolicyTimeout {
		bad("policies.timeout", p.Timeout, "is longer than %s", MaxPolicyTimeout)
	}
	// The namespace matters only when ConfigMaps are read; checking it then
	// fails at start rather than when the informer is set up.
	if p.ConfigMaps {
		if problems := validation.IsDNS1123Label(p.ConfigMapNamespace); len(problems) > 0 {
			bad("policies.configMapNamespace", p.ConfigMapNamespace, "is not a namespace name: %s", strings.Join(problems, "; "))
		}
	}
}

// validateDownload checks where and how often the bundle is downloaded, and
// the bounds on what is.
func (b Bundle) validateDownload(key func(field string) string, bad func(key string, value any, format string, args ...any)) {
	if u, err := url.Parse(b.URL); err != nil {
		bad(key("url"), b.URL, "is not a URL: %v", err)
	} else if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad(key("url"), b.URL, "is not an http or https URL")
	}

	if b.PollMin < 0 {
		bad(key("pollMin"), b.PollMin, "is negative")
	}
	if b.PollMax < 0 {
		bad(key("pollMax"), b.PollMax, "is negative")
	} else if b.PollMin > 0 && b.PollMax > 0 && b.PollMax < b.PollMin {
		bad(key("pollMax"), b.PollMax, "is shorter than pollMin (%s)", b.PollMin)
	}
	if b.SizeLimitBytes < 0 {
		bad(key("sizeLimitBytes"), b.SizeLimitBytes, "is negative")
	}
	if b.TotalSizeLimitBytes < 0 {
		bad(key("totalSizeLimitBytes"), b.TotalSizeLimitBytes, "is negative")
	}
	if b.DownloadTimeout < 0 {
		bad(key("downloadTimeout"), b.DownloadTimeout, "is negative")
	}
	if !slices.Contains(bundleTriggers, b.Trigger) {
		bad(key("trigger"), b.Trigger, "is not periodic or manual")
	}
	if !slices.Contains(bundleAlgorithms, b.Algorithm) && b.Algorithm != "" {
		bad(key("algorithm"), b.Algorithm, "is not one of %s", strings.Join(bundleAlgorithms, ", "))
	}
}

// validateFiles reads the bundle's token, CA and key files now so that a
// missing Secret or ConfigMap mount stops the controller at start instead
// of failing every download.
func (b Bundle) validateFiles(key func(field string) string, bad func(key string, value any, format string, args ...any)) {
	if b.TokenFile != "" {
		if _, err := os.ReadFile(b.TokenFile); err != nil {
			bad(key("tokenFile"), b.TokenFile, "cannot be read: %v", err)
		}
	}
	if b.CACertFile != "" {
		if err := checkPEMFile(b.CACertFile); err != nil {
			bad(key("caCertFile"), b.CACertFile, "%v", err)
		}
	}
	if b.PublicKeyFile == "" {
		// These only tune signature verification: set without a key
		// they suggest a verification that does not happen.
		for _, f := range []struct{ name, value string }{{"keyID", b.KeyID}, {"algorithm", b.Algorithm}, {"scope", b.Scope}} {
			if f.value != "" {
				bad(key(f.name), f.value, "is set but publicKeyFile is not: the bundle's signature would not be verified")
			}
		}
		return
	}
	var err error
	if strings.HasPrefix(b.Algorithm, "HS") {
		// An HS key is a shared secret, any bytes.
		err = checkNonEmptyFile(b.PublicKeyFile)
	} else {
		// OPA takes RS, PS and ES keys from a PEM block only.
		err = checkPEMFile(b.PublicKeyFile)
	}
	if err != nil {
		bad(key("publicKeyFile"), b.PublicKeyFile, "%v", err)
	}
}

// validateOPA checks what the engine hands on to OPA: the evaluations'
// memory and value bounds, the parameters, the decision-log configuration
// and masks.
func (p Policies) validateOPA(bad func(key string, value any, format string, args ...any)) {
	if p.MemoryBudgetBytes < 0 {
		bad("policies.memoryBudgetBytes", p.MemoryBudgetBytes, "is negative")
	}
	if p.ValueLimitBytes < 0 {
		bad("policies.valueLimitBytes", p.ValueLimitBytes, "is negative")
	}

	// The engine hands both maps on as JSON (data.claimwarden.params, OPA's
	// configuration); YAML can hold values JSON cannot, such as .inf and .nan.
	// Each top-level key is checked alone so that the message names it.
	checkJSON := func(prefix string, m map[string]any) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if _, err := json.Marshal(m[k]); err != nil {
				bad(prefix+"."+k, m[k], "cannot be encoded as JSON: %v", err)
			}
		}
	}
	checkJSON("policies.params", p.Params)
	checkJSON("policies.decisionLogs", p.DecisionLogs)
	for _, ptr := range p.DecisionLogMask {
		if !decisionLogMaskPointer.MatchString(ptr) {
			bad("policies.decisionLogMask", ptr, "is not a JSON pointer into /input, /result or /nd_builtin_cache")
		}
	}
}

// checkNonEmptyFile reports a file that cannot be read or is empty.
func checkNonEmptyFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot be read: %w", err)
	}
	if len(b) == 0 {
		return fmt.Errorf("is empty")
	}
	return nil
}

// checkPEMFile reports a file that cannot be read or holds no PEM block.
func checkPEMFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot be read: %w", err)
	}
	if block, _ := pem.Decode(b); block == nil {
		return fmt.Errorf("holds no PEM block")
	}
	return nil
}
