//go:build tools

// Package tools pins the Flux kustomize-controller built by `make testenv`.
package tools

import _ "github.com/fluxcd/kustomize-controller"
