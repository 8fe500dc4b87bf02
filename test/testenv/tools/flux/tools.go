//go:build tools

// Package tools pins the Flux controllers built by `make testenv`.
package tools

import (
	_ "github.com/fluxcd/helm-controller"
	_ "github.com/fluxcd/kustomize-controller"
	_ "github.com/fluxcd/source-controller"
)
