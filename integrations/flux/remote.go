package flux

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"sigs.k8s.io/kustomize/api/resource"
	kustypes "sigs.k8s.io/kustomize/api/types"
	sigsyaml "sigs.k8s.io/yaml"
)

// errRemote marks a build refused for a remote reference.
var errRemote = errors.New("remote bases and resources are disabled")

// gitUser is the user@ prefix with which kustomize takes a reference for an
// scp-like Git URL (git@host:org/repo).
var gitUser = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*@`)

// isRemote reports whether kustomize would fetch ref over the network or
// clone it with git rather than read it from the artifact. kustomize's own
// tests (its loader's IsRemoteFile and git.NewRepoSpecFromURL) are internal
// packages, so this is a superset of them: any URL scheme, the git:: prefix,
// user@host: and the github.com shorthand.
func isRemote(ref string) bool {
	ref = strings.TrimSpace(ref)
	if len(ref) >= 5 && strings.EqualFold(ref[:5], "git::") {
		return true
	}
	if strings.Contains(ref, "://") || gitUser.MatchString(ref) {
		return true
	}
	lower := strings.ToLower(ref)
	if strings.HasPrefix(lower, "github.com/") || strings.HasPrefix(lower, "github.com:") {
		return true
	}
	u, err := url.Parse(ref)
	return err == nil && (strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https"))
}

// remoteError names the file, the field and the reference refused, without
// its user information: a token in a remote base's URL would otherwise reach
// the rollouts' conditions, events and logs.
func remoteError(file, field, ref string) error {
	return fmt.Errorf("%s: %s: remote reference %q refused: %w", file, field, proposal.RedactURL(ref), errRemote)
}

// checkKustomizationRefs refuses a kustomization file that names anything
// kustomize would fetch: every field kustomize loads a file or a directory
// from, and the inline generator, transformer and validator configurations.
func checkKustomizationRefs(rf *resource.Factory, file string, data []byte) error {
	// kustomize's own decoding: its keys match case-insensitively.
	var k kustypes.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return nil // kustomize refuses it too, naming the file; nothing is fetched from it
	}
	type ref struct{ field, value string }
	var refs []ref
	add := func(field string, values ...string) {
		for _, v := range values {
			refs = append(refs, ref{field, v})
		}
	}
	add("resources", k.Resources...)
	//lint:ignore SA1019 deprecated, but kustomize still loads them
	add("bases", k.Bases...)
	add("components", k.Components...)
	add("crds", k.Crds...)
	add("configurations", k.Configurations...)
	add("openapi.path", k.OpenAPI["path"])
	for _, p := range k.Patches {
		add("patches.path", p.Path)
	}
	//lint:ignore SA1019 deprecated, but kustomize still loads them
	for _, p := range k.PatchesJson6902 {
		add("patchesJson6902.path", p.Path)
	}
	//lint:ignore SA1019 deprecated, but kustomize still loads them
	for _, p := range k.PatchesStrategicMerge {
		add("patchesStrategicMerge", string(p))
	}
	for _, r := range k.Replacements {
		add("replacements.path", r.Path)
	}
	for _, g := range k.ConfigMapGenerator {
		addKV(add, "configMapGenerator", g.KvPairSources)
	}
	for _, g := range k.SecretGenerator {
		addKV(add, "secretGenerator", g.KvPairSources)
	}
	for _, h := range k.HelmCharts {
		add("helmCharts.valuesFile", h.ValuesFile)
		add("helmCharts.additionalValuesFiles", h.AdditionalValuesFiles...)
	}
	for _, plugins := range []struct {
		field   string
		entries []string
	}{{"generators", k.Generators}, {"transformers", k.Transformers}, {"validators", k.Validators}} {
		field := plugins.field
		for _, e := range plugins.entries {
			// kustomize takes an entry that parses as objects for an inline configuration.
			if err := checkPluginRefs(rf, file+": "+field, []byte(e)); err != nil {
				return err
			}
			add(field, e)
		}
	}
	for _, r := range refs {
		if isRemote(r.value) {
			return remoteError(file, r.field, r.value)
		}
	}
	return nil
}

// addKV adds a generator's files (key=path or path) and env files.
func addKV(add func(string, ...string), field string, s kustypes.KvPairSources) {
	for _, f := range s.FileSources {
		add(field+".files", f)
		if _, path, ok := strings.Cut(f, "="); ok {
			add(field+".files", path)
		}
	}
	add(field+".envs", s.EnvSources...)
	add(field+".env", s.EnvSource)
}

// pluginKinds are kustomize's builtin generators and transformers that load
// files (and so URLs); with plugins disabled only builtins run. A
// configuration of one can be any file a generators, transformers or
// validators entry names, or such an entry inline.
var pluginKinds = []string{
	"ConfigMapGenerator", "SecretGenerator", "PatchTransformer", "PatchJson6902Transformer",
	"PatchStrategicMergeTransformer", "ReplacementTransformer", "HelmChartInflationGenerator",
	"ValueAddTransformer",
}

// pluginConfig holds the fields of pluginKinds that name files.
type pluginConfig struct {
	kustypes.KvPairSources `json:",inline"`
	Path                   string   `json:"path"`
	Paths                  []string `json:"paths"`
	ValuesFile             string   `json:"valuesFile"`
	AdditionalValuesFiles  []string `json:"additionalValuesFiles"`
	TargetFilePath         string   `json:"targetFilePath"`
	Replacements           []struct {
		Path string `json:"path"`
	} `json:"replacements"`
}

// mayConfigurePlugin is a cheap filter before parsing: a kind is spelt out,
// unless escaped in a double-quoted or JSON string.
func mayConfigurePlugin(data []byte) bool {
	if bytes.IndexByte(data, '\\') >= 0 {
		return true
	}
	for _, k := range pluginKinds {
		if bytes.Contains(data, []byte(k)) {
			return true
		}
	}
	return false
}

// checkPluginRefs refuses builtin plugin configurations in data that name a
// remote file. It parses data as kustomize parses configurations (its
// resource factory, then sigs.k8s.io/yaml per object), so that no document
// is read differently here and there.
func checkPluginRefs(rf *resource.Factory, file string, data []byte) error {
	if !mayConfigurePlugin(data) {
		return nil
	}
	resources, err := rf.SliceFromBytes(data)
	if err != nil {
		return nil // kustomize cannot use it as a configuration either
	}
	for _, res := range resources {
		if !slices.Contains(pluginKinds, res.GetKind()) {
			continue
		}
		y, err := res.AsYAML()
		if err != nil {
			continue
		}
		var p pluginConfig
		if sigsyaml.Unmarshal(y, &p) != nil {
			continue // the plugin refuses it the same way
		}
		refs := slices.Concat(p.FileSources, p.EnvSources, p.Paths, p.AdditionalValuesFiles,
			[]string{p.EnvSource, p.Path, p.ValuesFile, p.TargetFilePath})
		for _, f := range p.FileSources {
			if _, path, ok := strings.Cut(f, "="); ok {
				refs = append(refs, path)
			}
		}
		for _, r := range p.Replacements {
			refs = append(refs, r.Path)
		}
		for _, r := range refs {
			if isRemote(r) {
				return remoteError(file, res.GetKind(), r)
			}
		}
	}
	return nil
}
