package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/cmd/claimwarden/app/check"
	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/integrations/commitstatus"
	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

// Exit codes of `claimwarden check`.
const (
	exitDenied     = 1 // a policy denied a change
	exitCheckInput = 2 // usage, input, cluster or Git host errors
)

// tokenEnv holds the Git host token of --post-status and --comment.
const tokenEnv = "CLAIMWARDEN_GIT_TOKEN"

// checkFlags are the flags of `claimwarden check`.
type checkFlags struct {
	files, kustomize, base   []string
	namespace, kubeconfig    string
	targetNamespace          string
	live                     bool
	kubeContext              string
	allowNamespaceMove       bool
	policyDirs, bundles      []string
	params                   []string
	configPath, output       string
	strategy                 string
	postStatus, comment      bool
	revision, repository     string
	pr                       int
	hostType, tokenFile      string
	contextPrefix, targetURL string
	allowNew                 bool
	maxInputBytes            string
}

func newCheckCommand(environ []string) *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check (-f PATH... | -k DIR) (--base PATH... | --kubeconfig FILE | --live)",
		Short: "Check proposed StatefulSets against the policies, before merging",
		Long: `Check reads proposed manifests, gives their objects the namespaces the GitOps
tool gives them (--namespace, --target-namespace), compares each StatefulSet's
volumeClaimTemplates with the current state — base manifests (offline) or a live
cluster (read-only) — and asks the controller's policies about every claim that
would change. It prints the plan, and can post it as commit statuses and as a
pull-request comment.

Exit codes: 0 when every change is allowed or nothing changes, 1 when a policy
denies a change, 2 for a usage, input, cluster or Git host error.

The Git token of --post-status and --comment is read from $` + tokenEnv + `
or --git-token-file. docs/check.md has CI snippets and the JSON schema.`,
		Example: `  claimwarden check -f deploy/ --base base/
  git show origin/main:deploy/db.yaml | claimwarden check -f deploy/db.yaml --base -
  claimwarden check -k overlays/prod --kubeconfig ~/.kube/config -o markdown
  claimwarden check -k apps/db --target-namespace shop --live --context prod`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.validate(); err != nil {
				return err // a usage error
			}
			// The URL goes into the policy input, the report and the
			// comment: without user information, like every Source.
			repository, err := proposal.CanonicalRepositoryURL(f.repository)
			if err != nil {
				return fmt.Errorf("--repository: %v", err)
			}
			f.repository = repository
			return runCheck(cmd, f, environ)
		},
	}
	fs := cmd.Flags()
	fs.StringSliceVarP(&f.files, "filename", "f", nil, `proposed manifests: a file, a directory (*.yaml, *.yml, *.json, recursively) or "-" for stdin; repeatable`)
	fs.StringSliceVarP(&f.kustomize, "kustomize", "k", nil, "a directory whose kustomize build is proposed, built as Flux builds it; repeatable")
	fs.StringVarP(&f.namespace, "namespace", "n", manifests.DefaultNamespace, "namespace of namespaced objects that name none, as kubectl -n and an Argo CD Application's destination.namespace give it")
	fs.StringVar(&f.targetNamespace, "target-namespace", "", "namespace of every namespaced object, proposed and base, over the one it names, as a Flux Kustomization's spec.targetNamespace sets it")
	fs.BoolVar(&f.allowNamespaceMove, "allow-namespace-move", false, "check a StatefulSet that leaves the current namespace for another as new there; without it that is an error, since it is most likely a namespace the proposal lost")
	fs.StringSliceVar(&f.base, "base", nil, `manifests of the current state (offline): each base template stands for one claim per replica; a file, a directory or "-"`)
	fs.BoolVar(&f.allowNew, "allow-new", false, "accept a --base without StatefulSets, every proposed one being new; without it such a base is an error, since an empty or wrong base would pass every change")
	fs.StringVar(&f.maxInputBytes, "max-input-bytes", resource.NewQuantity(manifests.DefaultMaxBytes, resource.BinarySI).String(), "limit on the bytes of the proposed manifests, and separately of the base ones (a quantity: 32Mi)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "compare with the cluster of this kubeconfig instead (reads StatefulSets, PVCs, StorageClasses and Namespaces; writes nothing)")
	fs.BoolVar(&f.live, "live", false, "compare with the cluster of the current kubeconfig, found as kubectl finds it ($KUBECONFIG, ~/.kube/config, in-cluster); read-only as --kubeconfig")
	fs.StringVar(&f.kubeContext, "context", "", "the kubeconfig context of --kubeconfig or --live (default: its current context)")
	fs.StringSliceVar(&f.policyDirs, "policy", nil, "directory or file of .rego policies (and .json/.yaml data) besides the shipped ones; repeatable")
	fs.StringSliceVar(&f.bundles, "bundle", nil, "URL of an OPA bundle of policies; repeatable (tokens, keys: use --config)")
	fs.StringArrayVar(&f.params, "param", nil, "policy parameter key=value (value read as YAML: 50, [a, b], 100Gi); repeatable, over the --config ones")
	fs.StringVar(&f.configPath, "config", "", "the controller's configuration file: its policies.* and gitStatus.* sections apply")
	fs.StringVar(&f.strategy, "update-strategy", "", "update strategy of StatefulSets without the annotation (default: the --config value, else InPlace)")
	fs.StringVarP(&f.output, "output", "o", check.FormatTable, "output format: "+strings.Join(check.Formats, ", "))
	fs.BoolVar(&f.postStatus, "post-status", false, "post the verdicts as commit statuses on --revision of --repository")
	fs.StringVar(&f.revision, "revision", "", "commit SHA the statuses are posted on")
	fs.StringVar(&f.repository, "repository", "", "repository URL (https, ssh or git@host:owner/name)")
	fs.BoolVar(&f.comment, "comment", false, "post the plan as a comment on pull request --pr of --repository, updated in place on re-runs")
	fs.IntVar(&f.pr, "pr", 0, "pull (merge) request number for --comment")
	fs.StringVar(&f.hostType, "git-host-type", "", "API of the repository's host when --config does not list it: "+hostTypeList())
	fs.StringVar(&f.tokenFile, "git-token-file", "", "file holding the Git host token (default: $"+tokenEnv+")")
	fs.StringVar(&f.contextPrefix, "git-status-context-prefix", "", "start of the status contexts, <prefix>/<namespace>/<statefulset> (default: the --config value, else claimwarden)")
	fs.StringVar(&f.targetURL, "git-status-target-url", "", "link posted with every status, e.g. the CI job (default: the --config value)")
	return cmd
}

func hostTypeList() string {
	var s []string
	for _, t := range githost.HostTypes() {
		s = append(s, string(t))
	}
	return strings.Join(s, ", ")
}

// validate refuses flag combinations that cannot run; these are usage errors.
func (f checkFlags) validate() error {
	switch {
	case len(f.files) == 0 && len(f.kustomize) == 0:
		return errors.New("give the proposed manifests with -f or -k")
	case countTrue(len(f.base) > 0, f.kubeconfig != "", f.live) != 1:
		return errors.New("give exactly one of --base (offline), --kubeconfig FILE and --live (the live cluster)")
	case !slices.Contains(check.Formats, f.output):
		return fmt.Errorf("--output %q is not one of %s", f.output, strings.Join(check.Formats, ", "))
	case count(f.files, manifests.Stdin)+count(f.base, manifests.Stdin) > 1:
		return errors.New(`"-" (stdin) can be read once only`)
	case f.postStatus && (f.revision == "" || f.repository == ""):
		return errors.New("--post-status needs --revision and --repository")
	case f.comment && (f.pr <= 0 || f.repository == ""):
		return errors.New("--comment needs --pr (a pull request number) and --repository")
	case f.hostType != "" && !slices.Contains(githost.HostTypes(), githost.HostType(f.hostType)):
		return fmt.Errorf("--git-host-type %q is not one of %s", f.hostType, hostTypeList())
	case f.strategy != "" && f.strategy != string(v1alpha1.InPlace) && f.strategy != string(v1alpha1.OnClaimDelete):
		return fmt.Errorf("--update-strategy %q is not one of %s, %s", f.strategy, v1alpha1.InPlace, v1alpha1.OnClaimDelete)
	case f.allowNew && len(f.base) == 0:
		return errors.New("--allow-new is about --base; with --kubeconfig or --live the cluster says what is new")
	case f.kubeContext != "" && len(f.base) > 0:
		return errors.New("--context picks a context of the kubeconfig: give it with --kubeconfig or --live, not --base")
	}
	if _, err := f.inputBytes(); err != nil {
		return err
	}
	if f.postStatus {
		if _, ok := proposal.ParseRevision(f.revision); !ok {
			return fmt.Errorf("--revision %q names no commit (want a full SHA)", f.revision)
		}
	}
	for _, p := range f.params {
		if k, _, ok := strings.Cut(p, "="); !ok || k == "" {
			return fmt.Errorf("--param %q is not key=value", p)
		}
	}
	return nil
}

// inputBytes is --max-input-bytes in bytes.
func (f checkFlags) inputBytes() (int64, error) {
	q, err := resource.ParseQuantity(f.maxInputBytes)
	if err != nil || q.Sign() <= 0 || q.CmpInt64(math.MaxInt64) >= 0 {
		return 0, fmt.Errorf("--max-input-bytes %q is not a positive quantity of bytes such as 32Mi", f.maxInputBytes)
	}
	return q.Value(), nil
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func count(s []string, v string) int {
	n := 0
	for _, e := range s {
		if e == v {
			n++
		}
	}
	return n
}

// inputError ends check with exit code 2, printing err without the usage
// hint; what the input wrote into the message cannot drive the terminal.
func inputError(err error) error {
	return exitError{code: exitCheckInput, err: printableError{err}}
}

// printableError is err with its message made check.Printable.
type printableError struct{ err error }

func (e printableError) Error() string { return check.Printable(e.err.Error()) }
func (e printableError) Unwrap() error { return e.err }

func runCheck(cmd *cobra.Command, f checkFlags, environ []string) error {
	ctx := cmd.Context()
	cfg := config.Default()
	var err error
	if f.configPath != "" {
		// Only the file: CLAIMWARDEN_* variables configure the controller,
		// and a CI job may hold the check's own (the token).
		if cfg, err = config.Load(nil, f.configPath, nil); err != nil {
			return inputError(err)
		}
	}
	if cfg.Policies.Params, err = checkParams(cfg.Policies.Params, f.params); err != nil {
		return inputError(err)
	}
	prices, err := check.PricesFromParams(cfg.Policies.Params)
	if err != nil {
		return inputError(err)
	}
	engine, err := checkPolicies(ctx, cfg.Policies, f)
	if err != nil {
		return inputError(err)
	}
	defer engine.Stop()

	maxBytes, _ := f.inputBytes() // validated
	o := check.Options{
		Files: f.files, Kustomizations: f.kustomize, Stdin: cmd.InOrStdin(),
		Namespace: f.namespace, TargetNamespace: f.targetNamespace, AllowNamespaceMove: f.allowNamespaceMove,
		Base: f.base, AllowNew: f.allowNew, Limits: manifests.Limits{Bytes: maxBytes}, Policies: engine,
		Strategy:   v1alpha1.UpdateStrategy(cmp.Or(f.strategy, string(cfg.UpdateStrategy))),
		Repository: f.repository, Revision: f.revision,
		ContextPrefix: cmp.Or(f.contextPrefix, cfg.GitStatus.ContextPrefix),
		Prices:        prices,
	}
	if f.kubeconfig != "" || f.live {
		if o.Cluster, err = checkRESTConfig(f.kubeconfig, f.kubeContext); err != nil {
			return inputError(err)
		}
	}
	report, err := check.Run(ctx, o)
	if err != nil {
		return inputError(err)
	}
	out := cmd.OutOrStdout()
	if err := check.Write(out, report, f.output, check.WriteOptions{Colour: useColour(out, environ), Version: version()}); err != nil {
		return inputError(err)
	}
	if f.postStatus || f.comment {
		if err := publish(ctx, cmd, f, cfg.GitStatus, environ, report); err != nil {
			return inputError(err)
		}
	}
	if report.Denied() {
		denied, all := report.Summary.Denied, report.Summary.Claims
		for _, st := range report.StatefulSets {
			if st.Templates != nil {
				all++
				if st.Templates.Verdict == check.Denied {
					denied++
				}
			}
		}
		return exitError{code: exitDenied, err: fmt.Errorf("denied: %d of %s", denied, plural(all, "change"))}
	}
	return nil
}

// checkRESTConfig is the configuration of the cluster check reads, found
// as kubectl finds it: the kubeconfig file given (--kubeconfig) alone, else
// $KUBECONFIG, ~/.kube/config, or the in-cluster configuration (--live);
// kubeContext, when set, picks a context other than the current one.
func checkRESTConfig(kubeconfig, kubeContext string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	c, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
	switch {
	case err != nil && kubeconfig != "":
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	case clientcmd.IsEmptyConfig(err):
		return nil, errors.New("--live: no kubeconfig in $KUBECONFIG or ~/.kube/config, and not running in a cluster")
	case err != nil:
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	// The user agent tells claimwarden's requests apart in audit logs.
	c.UserAgent = "claimwarden/" + version()
	return c, nil
}

// publish posts the commit statuses and the comment.
func publish(ctx context.Context, cmd *cobra.Command, f checkFlags, g config.GitStatus, environ []string, report *check.Report) error {
	token, err := gitToken(f.tokenFile, environ)
	if err != nil {
		return err
	}
	configured := make([]githost.Host, 0, len(g.Hosts))
	for _, h := range g.Hosts {
		configured = append(configured, githost.Host{URL: h.URL, Type: githost.HostType(h.Type)})
	}
	host, repo, err := check.ResolveHost(f.repository, configured, githost.HostType(f.hostType), token)
	if err != nil {
		return err
	}
	if f.postStatus {
		provider, err := commitstatus.NewProvider(host, githost.Clients{})
		if err != nil {
			return err
		}
		sha, _ := proposal.ParseRevision(f.revision)
		if err := check.PostStatuses(ctx, report, provider, repo, sha, cmp.Or(f.targetURL, g.TargetURL)); err != nil {
			return err
		}
		noun := "commit statuses"
		if report.Summary.Changed == 1 {
			noun = "commit status"
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "claimwarden: posted %d %s on %s\n", report.Summary.Changed, noun, sha)
	}
	if f.comment {
		url, err := check.Comment(ctx, host, repo, f.pr, cmp.Or(f.contextPrefix, g.ContextPrefix), report)
		if err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "claimwarden: commented on pull request %d: %s\n", f.pr, url)
	}
	return nil
}

// gitToken reads the token from file, else from the environment.
func gitToken(file string, environ []string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--git-token-file: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, tokenEnv+"="); ok && v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("no Git token: set %s or give --git-token-file", tokenEnv)
}

// checkPolicies builds the engine as the controller does, from the
// configuration's policies.* (parameters merged by checkParams) and the flags, for one run: no polling, every
// bundle downloaded now, no decision logs. Policies that do not compile or
// a bundle that cannot be read stop the check (exit 2) instead of denying
// every change: the pull request is not what is wrong.
func checkPolicies(ctx context.Context, p config.Policies, f checkFlags) (*policies.Engine, error) {
	p.Dirs = append(slices.Clone(p.Dirs), f.policyDirs...)
	p.PollInterval = -1
	p.DecisionLogs = nil
	p.Bundles = slices.Clone(p.Bundles)
	for i, u := range f.bundles {
		p.Bundles = append(p.Bundles, config.Bundle{Name: fmt.Sprintf("flag-%d", i+1), URL: u})
	}
	for i := range p.Bundles {
		p.Bundles[i].Trigger = "manual"
	}
	opts, err := policyOptions(p, logr.Discard())
	if err != nil {
		return nil, err
	}
	engine, err := policies.New(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("policies: %w", err)
	}
	if err := engine.Reload(ctx); err != nil {
		engine.Stop()
		return nil, fmt.Errorf("policies: %w", err)
	}
	if s := engine.Status(); !s.Ready {
		engine.Stop()
		return nil, fmt.Errorf("policies: %s", s.Message)
	}
	return engine, nil
}

// checkParams are the configured policy parameters with the --param flags
// over them: the policies read them, and check its prices from them.
func checkParams(configured map[string]any, flags []string) (map[string]any, error) {
	params := maps.Clone(configured)
	if params == nil {
		params = map[string]any{}
	}
	for _, kv := range flags {
		k, v, _ := strings.Cut(kv, "=")
		var value any
		if err := yaml.Unmarshal([]byte(v), &value); err != nil {
			return nil, fmt.Errorf("--param %s: %w", k, err)
		}
		params[strings.ToLower(k)] = value
	}
	return params, nil
}

// useColour: only for a terminal, and not when NO_COLOR is set or TERM is dumb.
func useColour(w any, environ []string) bool {
	for _, kv := range environ {
		if strings.HasPrefix(kv, "NO_COLOR=") && kv != "NO_COLOR=" || kv == "TERM=dumb" {
			return false
		}
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
