package gitedit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	chartloader "helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// renderInSandbox is the child's side of a RenderJob: it loads the chart
// (its archives within MaxUnpackedBytes), renders each variant and
// summarises it. It runs what the tenant wrote; the sandbox bounds it.
func renderInSandbox(in []byte) (any, error) {
	var job RenderJob
	if err := json.Unmarshal(in, &job); err != nil {
		return nil, fmt.Errorf("reading the render job: %w", err)
	}
	if job.Edited < 0 || job.Edited >= len(job.Layers) {
		return nil, fmt.Errorf("the render job edits layer %d of %d", job.Edited, len(job.Layers))
	}
	chart, err := loadChart(job.Chart)
	if err != nil {
		return nil, err
	}
	out := make([]Rendered, len(job.Variants))
	for i, v := range job.Variants {
		layers := slices.Clone(job.Layers)
		if v != nil {
			layers[job.Edited] = v
		}
		manifests, err := render(chart, layers, common.ReleaseOptions{Name: job.Release, Namespace: job.Namespace})
		if err != nil {
			return nil, err
		}
		if out[i], err = summarise(manifests); err != nil {
			return nil, fmt.Errorf("rendering chart %s: %w", chart.Name(), err)
		}
	}
	return out, nil
}

// loadChart loads a chart from its files, its archives unpacked within
// one shared budget first.
func loadChart(files []ChartFile) (*chartv2.Chart, error) {
	if err := checkArchives(files); err != nil {
		return nil, fmt.Errorf("the chart: %w", err)
	}
	// Helm's own bound per archive, for what checkArchives did not see.
	archive.MaxDecompressedChartSize = MaxUnpackedBytes
	buffered := make([]*archive.BufferedFile, len(files))
	for i, f := range files {
		buffered[i] = &archive.BufferedFile{Name: f.Name, Data: f.Data}
	}
	c, err := chartloader.LoadFiles(buffered)
	if err != nil {
		return nil, fmt.Errorf("the chart: %w", err)
	}
	return c, nil
}

// render renders chart with layers merged as the tool merges them (the
// later wins), and returns its YAML manifests in a stable order.
func render(chart *chartv2.Chart, layers [][]byte, opts common.ReleaseOptions) ([]byte, error) {
	vals := map[string]any{}
	for _, layer := range layers {
		v, err := common.ReadValues(layer)
		if err != nil {
			return nil, fmt.Errorf("reading values: %w", err)
		}
		// MergeTables keeps its first argument's values: the later layer's.
		vals = util.MergeTables(v, vals)
	}
	top, err := util.ToRenderValues(chart, vals, opts, nil)
	if err != nil {
		return nil, fmt.Errorf("values of chart %s: %w", chart.Name(), err)
	}
	// Engine's zero value: no DNS lookups, no cluster client (lookup
	// answers nothing).
	files, err := engine.Engine{}.Render(chart, top)
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s: %w", chart.Name(), err)
	}
	var out bytes.Buffer
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") {
			out.WriteString("\n---\n")
			out.WriteString(files[name])
		}
	}
	return out.Bytes(), nil
}

// summarise is a render's Rendered: every document's digest with its
// claim template sizes blanked (compared on their own), and those sizes.
func summarise(manifests []byte) (Rendered, error) {
	r := Rendered{Docs: map[string]string{}, Sizes: map[string]string{}}
	nodes, err := kio.FromBytes(manifests)
	if err != nil {
		return r, err
	}
	for _, doc := range nodes {
		id := docID(doc)
		if doc.GetKind() == "StatefulSet" {
			for template, s := range claimTemplateSizes(doc) {
				r.Sizes[doc.GetNamespace()+"/"+doc.GetName()+"/"+template] = s.Value
				s.Value = ""
			}
		}
		text, err := doc.String()
		if err != nil {
			return r, err
		}
		sum := sha256.Sum256([]byte(text))
		r.Docs[id] += hex.EncodeToString(sum[:8])
	}
	return r, nil
}

// docID is a document's identity: apiVersion, kind, namespace/name.
func docID(doc *yaml.RNode) string {
	return doc.GetApiVersion() + " " + doc.GetKind() + " " + doc.GetNamespace() + "/" + doc.GetName()
}

// claimTemplateSizes are the scalars that set each claim template's size
// in a StatefulSet document, by template name.
func claimTemplateSizes(doc *yaml.RNode) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	list, err := doc.Pipe(yaml.Lookup("spec", "volumeClaimTemplates"))
	if err != nil || list == nil {
		return out
	}
	for _, el := range list.Content() {
		name := valueOf(valueOf(el, "metadata"), "name")
		s, err := storageOf(el, Target{}, false)
		if name != nil && err == nil && s.node != nil {
			out[name.Value] = s.node
		}
	}
	return out
}
