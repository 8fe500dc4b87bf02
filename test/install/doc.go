// Package install tests what a user installs: the CLI by `go install`, the
// Helm chart and config/default as rendered manifests (helm lint, helm
// template, kubeconform against the Kubernetes OpenAPI), and the chart and
// install.yaml on the test control plane. The tools come from bin/testenv
// (`make testenv`); a missing one fails the test, naming the target.
package install
