#!/usr/bin/env bash
# Writes the wrapper module that builds the control plane of one Kubernetes
# version for `make compat`: test/testenv/tools/kubernetes-compat/<version>/.
# Run it once when a version is added or bumped and commit its go.mod and
# go.sum, so the build is pinned like every other part of the test environment.
#
#   bash test/testenv/compat-module.sh v1.30.14
set -euo pipefail

version=${1:?usage: compat-module.sh vMAJOR.MINOR.PATCH}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
dir="$ROOT/test/testenv/tools/kubernetes-compat/$version"
staging="v0.${version#v1.}" # k8s.io/kubernetes v1.N.P publishes its staging modules as v0.N.P

export GOFLAGS=-mod=mod
gomod=$(go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
mkdir -p "$dir"
{
	echo "// Throw-away wrapper module that builds the Kubernetes $version control plane for"
	echo "// make compat (written by test/testenv/compat-module.sh): its v0.0.0 staging"
	echo "// requirements are replaced by the published $staging modules."
	echo "module github.com/claimwarden/claimwarden/test/testenv/tools/kubernetes-compat/$version"
	echo
	echo "go 1.26.0"
	echo
	echo "require k8s.io/kubernetes $version"
	echo
	echo "replace ("
	# Every k8s.io module that k8s.io/kubernetes requires at v0.0.0 is one of its staging modules.
	awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" { print "\t" $1 " => " $1 " '"$staging"'" }' "$gomod" | sort -u
	echo ")"
} >"$dir/go.mod"
cat >"$dir/tools.go" <<GO
//go:build tools

// Package tools pins the control-plane commands \`make compat\` builds for $version.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
GO
(cd "$dir" && go mod tidy)
echo "wrote $dir"
