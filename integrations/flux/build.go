package flux

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	securejoin "github.com/cyphar/filepath-securejoin"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/kustomize"
	securefs "github.com/fluxcd/pkg/kustomize/filesys"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// BuildOptions says what Build builds.
type BuildOptions struct {
	// Kustomization supplies spec.path, patches, images, namePrefix and
	// nameSuffix, targetNamespace, commonMetadata, components and postBuild.
	// Nil builds the root directory as it is, generating a
	// kustomization.yaml if it has none, as Flux does (what
	// `claimwarden check -k DIR` does).
	Kustomization *kustomizev1.Kustomization
	// Reader resolves postBuild.substituteFrom ConfigMaps and Secrets in the
	// Kustomization's namespace.
	Reader client.Reader
	// StrictSubstitutions fails a build on a variable without a value or a
	// default (kustomize-controller's StrictPostBuildSubstitutions gate).
	StrictSubstitutions bool
	// AllowRemoteBases lets kustomize clone remote bases. kustomize-
	// controller allows them unless --no-remote-bases; claimwarden does not
	// by default, since a build would then reach out to Git hosts.
	AllowRemoteBases bool
	// Limits bound what the build reads and produces (zero: DefaultLimits).
	Limits Limits
}

// Result is a build's output.
type Result struct {
	// Objects are the manifests kustomize-controller would apply, with
	// commonMetadata and its kustomize.toolkit.fluxcd.io/{name,namespace}
	// labels set (those only with a Kustomization).
	Objects []*unstructured.Unstructured
	// TemplateLabelKeys are label keys the build itself may inject into pod
	// and claim templates (kustomize commonLabels, labels entries reaching
	// templates, LabelTransformers), sorted. claimwarden never copies them
	// onto PVCs. It may hold keys that reached no template.
	TemplateLabelKeys []string
}

// DeepCopy returns a copy the caller may modify.
func (r *Result) DeepCopy() *Result {
	c := &Result{
		Objects:           make([]*unstructured.Unstructured, len(r.Objects)),
		TemplateLabelKeys: append([]string(nil), r.TemplateLabelKeys...),
	}
	for i, o := range r.Objects {
		c.Objects[i] = o.DeepCopy()
	}
	return c
}

// Build builds the manifests under root the way kustomize-controller
// v1.9.6 does: fluxcd/pkg/kustomize's generator writes the Kustomization's
// settings into the directory's kustomization.yaml (creating one for plain
// manifests), kustomize builds it confined to root, postBuild variables are
// substituted per resource and commonMetadata is applied. root is typically
// an artifact directory from Fetcher; it is not modified (the generated
// kustomization.yaml lives in memory, over the files on disk).
func Build(ctx context.Context, root string, o BuildOptions) (*Result, error) {
	vars, err := resolveVariables(ctx, o.Kustomization, o.Reader)
	if err != nil {
		return nil, err
	}
	return build(ctx, root, o, vars)
}

// build is Build with the postBuild variables resolved (nil: none). Its
// phases are those of kustomize-controller: find the directory, generate
// and build its kustomization, substitute, then add Flux's metadata.
func build(ctx context.Context, root string, o BuildOptions, vars map[string]string) (*Result, error) {
	ks := o.Kustomization
	what := "kustomize build of " + root
	if ks != nil {
		what = subject(ks)
	}
	root, dir, err := buildRoot(root, ks, o.Limits)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	u := unstructured.Unstructured{Object: map[string]any{}}
	if ks != nil {
		if u, err = toUnstructured(ks); err != nil {
			return nil, err
		}
	}
	m, err := kustomizeBuild(root, dir, u, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var substitute func(context.Context, *resource.Resource) error
	if vars != nil {
		substitute = substituter(ks, vars, o.StrictSubstitutions)
	}
	objects, err := objectsOf(ctx, m, substitute, o.Limits.withDefaults())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if ks != nil {
		setFluxMetadata(objects, ks)
	}

	keys, err := templateLabelKeys(root, o.Limits)
	if err != nil {
		return nil, fmt.Errorf("%s: reading kustomization files: %w", what, err)
	}
	return &Result{Objects: objects, TemplateLabelKeys: keys}, nil
}

// buildRoot makes root absolute and resolves the directory to build in it
// (buildDir), whose files it prescans: the generator parses those it reads
// itself, before kustomize and its limits.
func buildRoot(root string, ks *kustomizev1.Kustomization, l Limits) (absRoot, dir string, err error) {
	root, err = filepath.Abs(root)
	if err != nil {
		return "", "", err
	}
	if info, err := os.Stat(root); err != nil || !info.IsDir() {
		return "", "", fmt.Errorf("%s is not a directory", root)
	}
	if dir, err = buildDir(root, ks); err != nil {
		return "", "", err
	}
	if err := prescan(root, dir, l); err != nil {
		return "", "", err
	}
	return root, dir, nil
}

// kustomizeBuild writes the kustomization.yaml the generator makes of ks
// (u) over dir, in memory, and builds dir with kustomize, confined to root.
func kustomizeBuild(root, dir string, u unstructured.Unstructured, o BuildOptions) (resmap.ResMap, error) {
	manifest, kfile, _, err := kustomize.NewGenerator(root, u).GenerateManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("generating kustomization.yaml: %w", err)
	}
	fsys, err := buildFS(root, o.AllowRemoteBases, o.Limits)
	if err != nil {
		return nil, err
	}
	if err := fsys.WriteFile(kfile, manifest); err != nil {
		return nil, err
	}
	m, err := kustomize.Build(fsys, dir)
	if refused := fsys.refused(); refused != nil {
		// A read the guard refused, whatever kustomize made of it.
		return nil, refused
	}
	if err != nil {
		return nil, fmt.Errorf("kustomize build failed: %w", err)
	}
	return m, nil
}

// objectsOf turns the built resources into objects, substituting postBuild
// variables in each unless substitute is nil, within the limits on their
// number and size.
func objectsOf(ctx context.Context, m resmap.ResMap, substitute func(context.Context, *resource.Resource) error, limits Limits) ([]*unstructured.Unstructured, error) {
	if m.Size() > limits.Objects {
		return nil, fmt.Errorf("the build makes %d objects, over the limit of %d", m.Size(), limits.Objects)
	}
	var outputBytes int64
	objects := make([]*unstructured.Unstructured, 0, m.Size())
	for _, res := range m.Resources() {
		if res.GetName() == "" || res.GetKind() == "" || res.GetApiVersion() == "" {
			return nil, fmt.Errorf("a resource without apiVersion, kind or name: %s", res.String())
		}
		id := res.GetKind() + " " + res.GetName()
		if ns := res.GetNamespace(); ns != "" {
			id = res.GetKind() + " " + ns + "/" + res.GetName()
		}
		if substitute != nil {
			if err := substitute(ctx, res); err != nil {
				return nil, fmt.Errorf("spec.postBuild: %s: %w", id, err)
			}
		}
		data, err := res.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		if outputBytes += int64(len(data)); outputBytes > limits.OutputBytes {
			return nil, fmt.Errorf("the build makes more than %d bytes of objects (at %s), its limit", limits.OutputBytes, id)
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		objects = append(objects, obj)
	}
	return objects, nil
}

// buildDir resolves spec.path inside root. securejoin keeps symlinks from
// leading out (as in kustomize-controller); a path climbing out with ".."
// is refused outright rather than clamped to root.
func buildDir(root string, ks *kustomizev1.Kustomization) (string, error) {
	if ks == nil {
		return root, nil
	}
	p := ks.Spec.Path
	if rel := strings.TrimLeft(filepath.ToSlash(p), "/"); rel != "" && !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", fmt.Errorf("spec.path %q: outside the source artifact", p)
	}
	dir, err := securejoin.SecureJoin(root, p)
	if err != nil {
		return "", fmt.Errorf("spec.path %q: %w", p, err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("spec.path %q: not found in the source artifact", p)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("spec.path %q: not a directory", p)
	}
	return dir, nil
}

// buildFS reads from disk, confined to root, and keeps writes (the
// generated kustomization.yaml) in memory: kustomize-controller writes into
// a throw-away copy instead; this needs no copy of a cached artifact. Reads
// are guarded (guardfs.go).
func buildFS(root string, remoteBases bool, l Limits) (*guardedFS, error) {
	var disk filesys.FileSystem
	var err error
	if remoteBases {
		disk, err = securefs.MakeFsOnDiskSecureBuild(root)
	} else {
		disk, err = securefs.MakeFsOnDiskSecure(root)
	}
	if err != nil {
		return nil, err
	}
	return newGuardedFS(securefs.MakeFsInMemory(disk), root, remoteBases, l), nil
}

// setFluxMetadata does what kustomize-controller does to the built objects
// before applying them: its ownership labels, then commonMetadata's labels
// and annotations, all on top-level metadata only (fluxcd/pkg/ssa's
// SetOwnerLabels and SetCommonMetadata; that module is not among
// claimwarden's dependencies, and the two are a few lines).
func setFluxMetadata(objects []*unstructured.Unstructured, ks *kustomizev1.Kustomization) {
	labels := map[string]string{
		LabelKustomizationName:      ks.Name,
		LabelKustomizationNamespace: ks.Namespace,
	}
	var annotations map[string]string
	if cm := ks.Spec.CommonMetadata; cm != nil {
		labels = merged(labels, cm.Labels)
		annotations = cm.Annotations
	}
	for _, o := range objects {
		o.SetLabels(merged(o.GetLabels(), labels))
		if len(annotations) > 0 {
			o.SetAnnotations(merged(o.GetAnnotations(), annotations))
		}
	}
}

func merged(into, from map[string]string) map[string]string {
	if into == nil {
		into = make(map[string]string, len(from))
	}
	for k, v := range from {
		into[k] = v
	}
	return into
}
