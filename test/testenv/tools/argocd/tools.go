//go:build tools

// Package tools pins the Argo CD command built by `make testenv`: one binary that
// runs as argocd-server, argocd-repo-server or argocd-application-controller
// depending on argv[0] (or ARGOCD_BINARY_NAME).
package tools

import _ "github.com/argoproj/argo-cd/v3/cmd"
