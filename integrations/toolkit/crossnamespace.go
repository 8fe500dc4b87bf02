package toolkit

import "fmt"

// CrossNamespaceRefused is the Flux controllers' --no-cross-namespace-refs
// mirrored: when refused, a tool object of namespace from may not
// reference namespace ns ("" for its own). The error names the namespace;
// callers say what referenced it ("... names namespace X: ...").
func CrossNamespaceRefused(from, ns string, refused bool) error {
	if !refused || ns == "" || ns == from {
		return nil
	}
	return fmt.Errorf("namespace %s: cross-namespace references are not allowed (flux.noCrossNamespaceRefs)", ns)
}
