package config

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// Defaults of the gitStatus keys.
const (
	DefaultGitStatusContextPrefix = v1alpha1.ControllerName
	// DefaultTokenKey and DefaultPrivateKeyKey are the Secret keys read when a
	// reference names none.
	DefaultTokenKey      = "token"
	DefaultPrivateKeyKey = "privateKey"
)

// GitStatus configures the commit statuses posted on the commit that proposed
// a rollout, so that the pull request or merge request shows how the rollout
// of its change went.
type GitStatus struct {
	// ContextPrefix starts the context (the name) of every status:
	// <prefix>/<namespace>/<statefulset>; default "claimwarden". Clusters
	// rolling out the same commit tell their statuses apart by a prefix of
	// their own, e.g. "claimwarden/prod-eu".
	ContextPrefix string `mapstructure:"contextPrefix"`

	// TargetURL is an http or https link posted with every status, e.g. a
	// dashboard of the rollouts. Optional.
	TargetURL string `mapstructure:"targetURL"`

	// FluxEventsAddr, when set, is the event receiver of Flux's
	// notification-controller (e.g.
	// http://notification-controller.flux-system.svc.cluster.local./): each
	// rollout's outcome is also sent there as an event about the
	// Kustomization that applied the StatefulSet, so Flux Providers can post
	// it (docs/flux-notifications.md).
	FluxEventsAddr string `mapstructure:"fluxEventsAddr"`

	// Hosts are the Git hosts statuses are posted to, each with the
	// credentials to post with. A rollout whose repository is on no listed
	// host gets no status. File only.
	Hosts []GitHost `mapstructure:"hosts"`

	// WorkloadAnnotations lists, per namespace, the repositories that the
	// claimwarden.dev/repository and claimwarden.dev/revision annotations
	// of a StatefulSet may name. Whoever may edit a StatefulSet sets them,
	// and statuses are posted with the credentials of hosts; elsewhere
	// they are ignored (a Warning event, reason AnnotationIgnored, says
	// so) and a StatefulSet's own templates get no status. Empty (the
	// default) allows none. File only.
	WorkloadAnnotations []WorkloadAnnotationRule `mapstructure:"workloadAnnotations"`
}

// WorkloadAnnotationRule allows the repository annotations of the
// StatefulSets of one namespace, or of all.
type WorkloadAnnotationRule struct {
	// Namespace of the StatefulSets, or "*" for every namespace. Required.
	Namespace string `mapstructure:"namespace"`

	// RepositoryPrefixes are the repositories allowed, or the owners or
	// groups above them, e.g. https://github.com/team-a: same host and
	// port, and whole path elements (https://github.com/team-a does not
	// allow https://github.com/team-ab/x). https, ssh and scp-like forms
	// of the same repository are one; user information is ignored. At
	// least one.
	RepositoryPrefixes []string `mapstructure:"repositoryPrefixes"`
}

// GitHost is one Git host and its credentials. The credentials are read from
// Secrets through the API server, when a status is posted: a rotated Secret
// is used from the next status on, without a restart.
type GitHost struct {
	// URL is the host's http or https base URL, e.g. https://github.com or
	// https://gitlab.example.com:8443; repositories whose URL names the same
	// host (and port) post here. Required.
	URL string `mapstructure:"url"`

	// Type is the API the host speaks: github (GitHub and GitHub
	// Enterprise), gitlab, gitea (Gitea and Forgejo), bitbucket-cloud or
	// bitbucket-server (Bitbucket Server and Data Center). Required.
	Type string `mapstructure:"type"`

	// TokenSecretRef names the Secret key holding the access token posted
	// with. Exactly one of TokenSecretRef and GitHubApp.
	TokenSecretRef *SecretKeyRef `mapstructure:"tokenSecretRef"`

	// GitHubApp authenticates as a GitHub App installation, type github
	// only. Exactly one of TokenSecretRef and GitHubApp.
	GitHubApp *GitHubApp `mapstructure:"githubApp"`
}

// SecretKeyRef names one key of a Secret.
type SecretKeyRef struct {
	// Namespace of the Secret. Default: the namespace of the Pod the
	// controller runs in, or "claimwarden-system" outside a Pod. The
	// controller watches Secrets in the namespaces named here, and only
	// there: its RBAC must let it get, list and watch Secrets in each.
	Namespace string `mapstructure:"namespace"`

	// Name of the Secret. Required.
	Name string `mapstructure:"name"`

	// Key in the Secret's data; default "token" (in tokenSecretRef) or
	// "privateKey" (in githubApp.privateKeySecretRef).
	Key string `mapstructure:"key"`
}

// GitHubApp identifies a GitHub App installation; the controller exchanges
// the App's private key for short-lived installation tokens.
type GitHubApp struct {
	// AppID is the App's numeric ID, shown on its settings page. Required.
	AppID int64 `mapstructure:"appID"`

	// InstallationID is the numeric ID of the App's installation on the
	// organisation or account owning the repositories. Required.
	InstallationID int64 `mapstructure:"installationID"`

	// PrivateKeySecretRef names the Secret key holding the App's PEM private
	// key. Name required; key default "privateKey".
	PrivateKeySecretRef SecretKeyRef `mapstructure:"privateKeySecretRef"`
}

// gitHostTypes are the values of GitHost.Type, in the order error messages
// list them: the host types of integrations/githost.
var gitHostTypes = func() []string {
	var out []string
	for _, t := range githost.HostTypes() {
		out = append(out, string(t))
	}
	return out
}()

// defaultGitStatus returns the gitStatus configuration used where nothing is set.
func defaultGitStatus() GitStatus {
	return GitStatus{ContextPrefix: DefaultGitStatusContextPrefix}
}

// fillDefaults sets the defaults inside the hosts, which Default cannot
// hold: decoding makes every list entry from zero. podNS is the default
// namespace of the Secrets.
func (g *GitStatus) fillDefaults(podNS string) {
	fillHostDefaults(g.Hosts, podNS)
}

// fillHostDefaults sets the defaults of the Secret references of hosts.
func fillHostDefaults(hosts []GitHost, podNS string) {
	fill := func(ref *SecretKeyRef, key string) {
		if ref.Namespace == "" {
			ref.Namespace = podNS
		}
		if ref.Key == "" {
			ref.Key = key
		}
	}
	for i := range hosts {
		if h := &hosts[i]; h.TokenSecretRef != nil {
			fill(h.TokenSecretRef, DefaultTokenKey)
		}
		if h := &hosts[i]; h.GitHubApp != nil {
			fill(&h.GitHubApp.PrivateKeySecretRef, DefaultPrivateKeyKey)
		}
	}
}

// validate reports every invalid gitStatus value through bad, as Validate
// does. Values that may hold credentials (a URL with a password) are
// reported redacted.
func (g GitStatus) validate(bad func(key string, value any, format string, args ...any)) {
	// The prefix starts every context; "" would make contexts start with
	// "/", and a trailing "/" would double the separator.
	if g.ContextPrefix == "" {
		bad("gitStatus.contextPrefix", g.ContextPrefix, "is empty: every status context starts with it")
	} else if strings.HasPrefix(g.ContextPrefix, "/") || strings.HasSuffix(g.ContextPrefix, "/") {
		bad("gitStatus.contextPrefix", g.ContextPrefix, `starts or ends with "/": contexts are <prefix>/<namespace>/<statefulset>`)
	}
	if g.TargetURL != "" {
		if u, ok := httpURL("gitStatus.targetURL", g.TargetURL, bad); ok && u.User != nil {
			bad("gitStatus.targetURL", proposal.RedactURL(g.TargetURL), "holds a user name or password, which every status would publish")
		}
	}
	if g.FluxEventsAddr != "" {
		httpURL("gitStatus.fluxEventsAddr", g.FluxEventsAddr, bad)
	}

	g.validateWorkloadAnnotations(bad)

	validateHosts("gitStatus.hosts", g.Hosts, bad)
}

// validateHosts reports the invalid entries of a list of Git hosts (list
// is its configuration key) through bad.
func validateHosts(list string, hosts []GitHost, bad func(key string, value any, format string, args ...any)) {
	firstWithHost := map[string]int{}
	for i, h := range hosts {
		key := func(field string) string { return fmt.Sprintf("%s[%d].%s", list, i, field) }
		entry := fmt.Sprintf("%s[%d]", list, i)
		shown := proposal.RedactURL(h.URL)

		switch u, ok := httpURL(key("url"), h.URL, bad); {
		case !ok:
		case u.User != nil:
			bad(key("url"), shown, "holds a user name or password: reference a Secret in tokenSecretRef instead")
		case firstWithHost[hostOf(u)] != 0:
			// Repositories are matched to hosts by host name and port: a
			// second entry for the same one could never be chosen.
			bad(key("url"), shown, "names the same host (%s) as %s[%d]", hostOf(u), list, firstWithHost[hostOf(u)]-1)
		default:
			firstWithHost[hostOf(u)] = i + 1
		}

		if !slices.Contains(gitHostTypes, h.Type) {
			bad(key("type"), h.Type, "is not one of %s", strings.Join(gitHostTypes, ", "))
		}

		switch {
		case h.TokenSecretRef == nil && h.GitHubApp == nil:
			bad(entry, shown, "has neither tokenSecretRef nor githubApp: set one of them")
		case h.TokenSecretRef != nil && h.GitHubApp != nil:
			bad(entry, shown, "has both tokenSecretRef and githubApp: set one of them")
		}
		if h.TokenSecretRef != nil {
			h.TokenSecretRef.validate(key("tokenSecretRef"), bad)
		}
		if app := h.GitHubApp; app != nil {
			if h.Type != "github" && slices.Contains(gitHostTypes, h.Type) {
				bad(key("type"), h.Type, "has a githubApp, which only type github takes")
			}
			if app.AppID <= 0 {
				bad(key("githubApp.appID"), app.AppID, "is not a GitHub App ID (a positive number)")
			}
			if app.InstallationID <= 0 {
				bad(key("githubApp.installationID"), app.InstallationID, "is not an installation ID (a positive number)")
			}
			app.PrivateKeySecretRef.validate(key("githubApp.privateKeySecretRef"), bad)
		}
	}
}

// validateWorkloadAnnotations reports the invalid rules of
// gitStatus.workloadAnnotations through bad.
func (g GitStatus) validateWorkloadAnnotations(bad func(key string, value any, format string, args ...any)) {
	for i, rule := range g.WorkloadAnnotations {
		validateRepositoryRule(fmt.Sprintf("gitStatus.workloadAnnotations[%d]", i), rule.Namespace, rule.RepositoryPrefixes,
			"list the repositories (or their owners) the namespace's StatefulSets may name", bad)
	}
}

// validateRepositoryRule reports through bad a rule (its configuration
// key entry) of a namespace, or "*", and the repositories allowed there;
// want says what an empty list should hold.
func validateRepositoryRule(entry, namespace string, prefixes []string, want string, bad func(key string, value any, format string, args ...any)) {
	key := func(field string) string { return entry + "." + field }
	if namespace != "*" {
		if problems := validation.IsDNS1123Label(namespace); len(problems) > 0 {
			bad(key("namespace"), namespace, `is neither "*" nor a namespace name: %s`, strings.Join(problems, "; "))
		}
	}
	if len(prefixes) == 0 {
		bad(key("repositoryPrefixes"), "", "is empty: %s", want)
	}
	for j, p := range prefixes {
		if err := checkRepositoryPrefix(p); err != nil {
			bad(fmt.Sprintf("%s[%d]", key("repositoryPrefixes"), j), proposal.RedactURL(p), "%v", err)
		}
	}
}

// checkRepositoryPrefix says why p cannot start repository URLs that
// commit statuses are posted to.
func checkRepositoryPrefix(p string) error {
	clean, err := proposal.CanonicalRepositoryURL(p)
	switch {
	case err != nil:
		return err
	case clean == "":
		return errors.New("is empty")
	}
	if scheme, _, ok := strings.Cut(clean, "://"); ok && scheme != "https" && scheme != "http" && scheme != "ssh" {
		return fmt.Errorf("has scheme %q: statuses go only to https, http, ssh and scp-like (host:path) repositories", scheme)
	}
	return nil
}

// validate checks that r names a Secret key the API server could hold;
// prefix is r's configuration key.
func (r SecretKeyRef) validate(prefix string, bad func(key string, value any, format string, args ...any)) {
	if problems := validation.IsDNS1123Label(r.Namespace); len(problems) > 0 {
		bad(prefix+".namespace", r.Namespace, "is not a namespace name: %s", strings.Join(problems, "; "))
	}
	if problems := validation.IsDNS1123Subdomain(r.Name); len(problems) > 0 {
		bad(prefix+".name", r.Name, "is not a Secret name: %s", strings.Join(problems, "; "))
	}
	if problems := validation.IsConfigMapKey(r.Key); len(problems) > 0 {
		bad(prefix+".key", r.Key, "is not a Secret key: %s", strings.Join(problems, "; "))
	}
}

// hostOf returns the lower-cased host[:port] of u, without the scheme's
// default port: https://GitHub.com:443 and https://github.com are one host.
func hostOf(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6
	}
	if port := u.Port(); port != "" && !(u.Scheme == "https" && port == "443") && !(u.Scheme == "http" && port == "80") {
		host += ":" + port
	}
	return host
}

// httpURL parses raw, the value of key, as an http or https URL with a
// host; when it is not one it says why through bad (the value redacted)
// and returns false.
func httpURL(key, raw string, bad func(key string, value any, format string, args ...any)) (*url.URL, bool) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		bad(key, proposal.RedactURL(raw), "is not a URL: %v", urlErrorCause(err))
		return nil, false
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		bad(key, proposal.RedactURL(raw), "is not an http or https URL")
		return nil, false
	}
	return u, true
}

// urlErrorCause is url.Parse's error without the URL it quotes, which may
// hold a password.
func urlErrorCause(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}
