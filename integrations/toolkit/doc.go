// Package toolkit is what Flux's two tools, the Kustomizations
// (integrations/flux) and the HelmReleases (integrations/helm), share of
// the GitOps Toolkit, so that neither imports the other: the refusal of a
// cross-namespace reference under --no-cross-namespace-refs, and where a
// GitRepository points in Git.
package toolkit
