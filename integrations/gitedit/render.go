package gitedit

import (
	"context"
	"errors"
	"fmt"

	"github.com/claimwarden/claimwarden/integrations/sandbox"
)

// ChartFile is one file of a chart as read from Git or an artifact, its
// name relative to the chart's directory.
type ChartFile struct {
	Name string `json:"name"`
	Data []byte `json:"data"`
}

// RenderJob renders a chart as a release, once per variant of one values
// layer: what a search for the value that sets a size, and the check that
// an edit moves nothing else, need from one chart.
type RenderJob struct {
	Chart []ChartFile `json:"chart"`
	// Release and Namespace are the release's.
	Release   string `json:"release"`
	Namespace string `json:"namespace"`
	// Layers are the values, in the order the tool merges them (the later
	// wins); Variants the content of layer Edited in each render, nil for
	// the layer as it is.
	Layers   [][]byte `json:"layers"`
	Edited   int      `json:"edited"`
	Variants [][]byte `json:"variants"`
}

// Rendered is what a render is compared by: each document's digest with
// the sizes of its claim templates left out, and those sizes.
type Rendered struct {
	// Docs maps "apiVersion kind namespace/name" to the digest of every
	// document of that identity, in order.
	Docs map[string]string `json:"docs"`
	// Sizes maps namespace/statefulset/template to the template's size.
	Sizes map[string]string `json:"sizes"`
}

// Renderer renders charts: a chart is what a tenant wrote, templates that
// may loop or build huge strings, so renders run out of the controller's
// process (SandboxRenderer).
type Renderer interface {
	Render(ctx context.Context, job RenderJob) ([]Rendered, error)
}

// renderMode is the sandbox mode of chart renders.
const renderMode = "helm-render"

func init() { sandbox.Register(renderMode, renderInSandbox) }

// SandboxRenderer renders in a child process bounded in time, CPU, memory
// and output (integrations/sandbox).
type SandboxRenderer struct{ Runner *sandbox.Runner }

// Render renders job in a sandbox child.
func (s SandboxRenderer) Render(ctx context.Context, job RenderJob) ([]Rendered, error) {
	var out []Rendered
	if _, err := s.Runner.Run(ctx, renderMode, job, &out); err != nil {
		if errors.Is(err, sandbox.ErrLimit) {
			return nil, fmt.Errorf("rendering the chart of release %s/%s: %w", job.Namespace, job.Release, err)
		}
		return nil, err
	}
	if len(out) != len(job.Variants) {
		return nil, fmt.Errorf("rendering: %d results for %d renders", len(out), len(job.Variants))
	}
	return out, nil
}
