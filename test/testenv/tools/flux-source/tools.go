//go:build tools

// Package tools pins the Flux source-controller built by `make testenv`.
package tools

import _ "github.com/fluxcd/source-controller"
