#!/usr/bin/env bash
# Builds the release and manifest tools (`make image`, `make release` and the
# chart tests need them) into the same versioned cache as build.sh, and links
# them into bin/testenv/. Few tools on purpose, each a cold build CI pays for
# (measured with an empty GOCACHE on 2 busy cores, 2026-12-02):
#   helm        lint, template, package and install the chart; Argo CD's
#               repo-server renders Helm sources with it (test/argoenv) (315 s)
#   kubeconform validate every rendered manifest strictly, offline (39 s)
#   release     test/release: the image (go-containerregistry as a library,
#               instead of crane and ko), its SPDX SBOM, a local registry for
#               tests, and kubeconform's schemas from the Kubernetes OpenAPI in
#               the module cache, and install.yaml by the kustomize API
#               instead of a kustomize binary (188 s)
# The tests also render config/default with kubectl (build.sh) and compare. cosign is
# built only by `make release` when COSIGN_KEY is set (`tools.sh cosign`):
# 1398 s and 101 MB, and only signing needs it.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/claimwarden/testenv}
OUT="$ROOT/bin/testenv"

HELM_VERSION=v3.22.0
COSIGN_VERSION=v3.1.3
KUBECONFORM_VERSION=v0.8.0
K8S_VERSION=v1.37.2 # the OpenAPI the schemas come from; the control plane's version
PROMETHEUS_OPERATOR_VERSION=v0.85.0 # CRDs of the chart's ServiceMonitor, PodMonitor, PrometheusRule

mkdir -p "$CACHE" "$OUT"
# shellcheck source=lock.sh
source "$ROOT/test/testenv/lock.sh"

log() { printf '[tools] %s\n' "$*" >&2; }

# install NAME VERSION PKG: go install PKG@VERSION (no replace directives in
# its go.mod) into the cache.
install() {
	local name=$1 version=$2 pkg=$3 dir="$CACHE/$1-$2"
	if [[ ! -x $dir/$name ]]; then
		log "building $name $version (cached afterwards in $dir)"
		rm -rf "$dir.tmp"
		mkdir -p "$dir.tmp"
		local start=$SECONDS
		CGO_ENABLED=0 GOFLAGS= GOBIN="$dir.tmp" go install -trimpath -ldflags "-s -w" "$pkg@$version"
		log "built $name in $((SECONDS - start))s"
		rm -rf "$dir"
		mv "$dir.tmp" "$dir"
	fi
	ln -sfn "$dir/$name" "$OUT/$name"
}

# `tools.sh cosign`: signing only (make release with COSIGN_KEY).
if [[ ${1:-} == cosign ]]; then
	install cosign "$COSIGN_VERSION" github.com/sigstore/cosign/v3/cmd/cosign
	exit 0
fi

install helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm
install kubeconform "$KUBECONFORM_VERSION" github.com/yannh/kubeconform/cmd/kubeconform

# The project's own release tool is keyed by the hash of its sources, so a
# change to it rebuilds it and nothing else.
rel_hash=$(cd "$ROOT/test/release" && find . -type f \( -name '*.go' -o -name 'go.*' \) -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12)
rel_dir="$CACHE/release-$rel_hash"
if [[ ! -x $rel_dir/release ]]; then
	log "building release ($rel_hash)"
	rm -rf "$rel_dir.tmp"
	mkdir -p "$rel_dir.tmp"
	start=$SECONDS
	(cd "$ROOT/test/release" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$rel_dir.tmp/release" .)
	log "built release in $((SECONDS - start))s"
	rm -rf "$rel_dir"
	mv "$rel_dir.tmp" "$rel_dir"
fi
ln -sfn "$rel_dir/release" "$OUT/release"

# kubeconform's schemas: every kind of the Kubernetes OpenAPI (from the
# k8s.io/kubernetes module build.sh downloads), strict, plus the
# prometheus-operator CRDs the chart can render (from that module's zip). The
# tests add claimwarden's own CRD from the checkout.
schema_dir="$CACHE/kube-schemas-$K8S_VERSION-prometheus-operator-$PROMETHEUS_OPERATOR_VERSION"
if [[ ! -f $schema_dir/.done ]]; then
	log "converting the $K8S_VERSION OpenAPI into kubeconform schemas"
	k8s_src=$(cd "$ROOT/test/testenv/tools/kubernetes" && GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	prom_src=$(cd "$CACHE" && GOFLAGS= go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	rm -rf "$schema_dir.tmp"
	crd_flags=()
	for k in servicemonitors podmonitors prometheusrules; do
		crd_flags+=(-crd "$prom_src/example/prometheus-operator-crd/monitoring.coreos.com_$k.yaml")
	done
	"$OUT/release" schemas -openapi "$k8s_src/api/openapi-spec/swagger.json" "${crd_flags[@]}" -out "$schema_dir.tmp"
	touch "$schema_dir.tmp/.done"
	rm -rf "$schema_dir"
	mv "$schema_dir.tmp" "$schema_dir"
fi
ln -sfn "$schema_dir" "$OUT/kube-schemas"

# The image's CA certificates: Debian's ca-certificates package (downloaded,
# not the host's /etc/ssl, which may hold local additions), keyed by its
# version so a security update of the package is picked up.
ca_version=$(apt-cache show --no-all-versions ca-certificates | sed -n 's/^Version: //p')
ca_dir="$CACHE/ca-certificates-$ca_version"
if [[ ! -f $ca_dir/ca-certificates.crt ]]; then
	log "downloading Debian's ca-certificates $ca_version"
	rm -rf "$ca_dir.tmp"
	mkdir -p "$ca_dir.tmp"
	(cd "$ca_dir.tmp" && apt-get download -qq "ca-certificates=$ca_version" 2>/dev/null && dpkg-deb -x ./*.deb root)
	LC_ALL=C cat $(LC_ALL=C ls "$ca_dir.tmp"/root/usr/share/ca-certificates/mozilla/*.crt) >"$ca_dir.tmp/ca-certificates.crt"
	echo "$ca_version" >"$ca_dir.tmp/version"
	rm -rf "$ca_dir.tmp/root" "$ca_dir.tmp"/*.deb "$ca_dir"
	mv "$ca_dir.tmp" "$ca_dir"
fi
ln -sfn "$ca_dir" "$OUT/ca-certificates"

# podman and runc from Debian: test/install runs the image as the Deployment
# would (crun, podman's default, fails in the VMs this runs on; the tests
# pass --runtime runc).
if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
	log "installing podman and runc (Debian packages)"
	sudo=()
	if [[ $(id -u) != 0 ]]; then sudo=(sudo); fi
	export DEBIAN_FRONTEND=noninteractive
	if ! "${sudo[@]}" apt-get install -y -qq podman runc >/dev/null 2>&1; then
		"${sudo[@]}" apt-get update -qq
		"${sudo[@]}" apt-get install -y -qq podman runc >/dev/null
	fi
fi

log "tools ready in $OUT"
