#!/usr/bin/env bash
# Builds the real control plane used by the tests and the demo, the Gitea used by
# the commit-status tests, Flux's source-, kustomize- and helm-controller (with their CRDs)
# and Argo CD (with its CRDs, and Debian's redis-server as its cache) used by the
# GitOps tests, from the Go module proxy, caches each binary outside the repository
# keyed by version, and links it into bin/testenv/. A cached binary is reused;
# nothing is downloaded twice.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOOLS="$ROOT/test/testenv/tools"
CACHE=${TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/claimwarden/testenv}
# make compat builds another Kubernetes version's control plane into a directory
# of its own (test/testenv/compat.sh); everything else is this one's.
OUT=${TESTENV_OUT:-$ROOT/bin/testenv}

K8S_VERSION=v1.37.2
KUBE_VERSION=${KUBE_VERSION:-$K8S_VERSION}
ETCD_VERSION=v3.7.3
KWOK_VERSION=v0.8.0
GITEA_VERSION=v1.26.0
FLUX_VERSION=v1.9.6 # source-controller and kustomize-controller share it
HELM_CONTROLLER_VERSION=v1.6.0 # pairs with source-controller v1.9.x
ARGOCD_VERSION=v3.6.1
PROMETHEUS_VERSION=v0.316.0 # Prometheus 3.16

export CGO_ENABLED=0 GOFLAGS=-mod=mod
mkdir -p "$CACHE" "$OUT"
# shellcheck source=lock.sh
source "$ROOT/test/testenv/lock.sh"

log() { printf '[testenv] %s\n' "$*" >&2; }

# The parts to build, named as arguments (default: all of them): core (etcd, the
# kube-* binaries, kubectl, kwok), gitea, flux, argocd (with redis-server), prometheus, tools.
# The demos build only what their story runs.
parts=("$@")
if [[ ${#parts[@]} -eq 0 ]]; then parts=(core gitea flux argocd prometheus tools); fi
want() {
	local p
	for p in "${parts[@]}"; do [[ $p == "$1" ]] && return 0; done
	return 1
}

# build NAME VERSION DIR PKG [LDFLAGS]: go build PKG inside module DIR into the cache.
build() {
	local name=$1 version=$2 dir=$3 pkg=$4 ldflags=${5:-}
	local dest="$CACHE/$name-$version/$name"
	if [[ ! -x $dest ]]; then
		log "building $name $version (cached afterwards in $CACHE)"
		mkdir -p "$(dirname "$dest")"
		local start=$SECONDS
		(cd "$dir" && go build -trimpath -ldflags "-s -w $ldflags" -o "$dest.tmp" "$pkg")
		log "built $name in $((SECONDS - start))s"
		mv "$dest.tmp" "$dest"
	fi
	ln -sfn "$dest" "$OUT/$name"
}

# k8s_ldflags VERSION: what makes a binary built from the module proxy report
# VERSION instead of v0.0.0-master.
k8s_ldflags() {
	local minor=${1#v1.}
	minor=${minor%%.*}
	echo "-X k8s.io/component-base/version.gitVersion=$1 -X k8s.io/client-go/pkg/version.gitVersion=$1" \
		"-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
}

part_core() {
	# The tests' own version has the wrapper module with kubectl; the others
	# (make compat) have one each, with the server binaries only.
	local k8s_module="$TOOLS/kubernetes"
	if [[ $KUBE_VERSION != "$K8S_VERSION" ]]; then
		k8s_module="$TOOLS/kubernetes-compat/$KUBE_VERSION"
		[[ -f $k8s_module/go.mod ]] || { log "no wrapper module for $KUBE_VERSION: run bash test/testenv/compat-module.sh $KUBE_VERSION"; exit 1; }
	fi

	build etcd "$ETCD_VERSION" "$TOOLS/etcd" go.etcd.io/etcd/server/v3
	build kube-apiserver "$KUBE_VERSION" "$k8s_module" k8s.io/kubernetes/cmd/kube-apiserver "$(k8s_ldflags "$KUBE_VERSION")"
	build kube-controller-manager "$KUBE_VERSION" "$k8s_module" k8s.io/kubernetes/cmd/kube-controller-manager "$(k8s_ldflags "$KUBE_VERSION")"
	build kube-scheduler "$KUBE_VERSION" "$k8s_module" k8s.io/kubernetes/cmd/kube-scheduler "$(k8s_ldflags "$KUBE_VERSION")"
	build kubectl "$K8S_VERSION" "$TOOLS/kubernetes" k8s.io/kubernetes/cmd/kubectl "$(k8s_ldflags "$K8S_VERSION")"

	# kwok's own go.mod has no replace directives, so 'go install' at a pinned version works.
	kwok_dir="$CACHE/kwok-$KWOK_VERSION"
	if [[ ! -x $kwok_dir/kwok ]]; then
		log "building kwok $KWOK_VERSION"
		mkdir -p "$kwok_dir"
		GOFLAGS= GOBIN="$kwok_dir" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
	fi
	# Stages: nodes become Ready and keep a Lease; Pods become Ready, complete and go
	# away. Rewritten on every run (it is cheap) so a change of this list takes effect.
	src=$(GOFLAGS= go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	stage="$src/kustomize/stage"
	for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
		pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
		echo '---'
		cat "$stage/$f"
	done >"$kwok_dir/stages.yaml.tmp"
	mv "$kwok_dir/stages.yaml.tmp" "$kwok_dir/stages.yaml"
	ln -sfn "$kwok_dir/kwok" "$OUT/kwok"
	ln -sfn "$kwok_dir/stages.yaml" "$OUT/kwok-stages.yaml"
}

# Gitea, the Git host whose commit statuses the commitstatus tests read and write. Its
# go.mod has replace directives and a go.sum of its own, so it is built as the main
# module from a writable copy of its module directory rather than with 'go install'.
# The copy stays in the cache next to the binary: without the 'bindata' tag (whose
# assets need a node toolchain) Gitea reads templates/, options/ and public/ from it
# at run time (STATIC_ROOT_PATH), so it is linked as bin/testenv/gitea-src.
# sqlite is the only database the tests use; it needs cgo (gcc).
part_gitea() {
	gitea_dir="$CACHE/gitea-$GITEA_VERSION"
	if [[ ! -x $gitea_dir/gitea ]]; then
		log "building gitea $GITEA_VERSION (cgo, several minutes cold; cached afterwards in $gitea_dir)"
		gitea_mod=$(GOFLAGS= go mod download -json "code.gitea.io/gitea@$GITEA_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
		# A build interrupted earlier may have left a partial copy: start from a clean one.
		rm -rf "$gitea_dir/src" "$gitea_dir/src.tmp"
		mkdir -p "$gitea_dir"
		cp -r "$gitea_mod" "$gitea_dir/src.tmp"
		chmod -R u+w "$gitea_dir/src.tmp" # the module cache is read-only
		mv "$gitea_dir/src.tmp" "$gitea_dir/src"
		gitea_tags="sqlite sqlite_unlock_notify"
		(cd "$gitea_dir/src" && CGO_ENABLED=1 go build -tags "$gitea_tags" -trimpath \
			-ldflags "-s -w -X main.Version=${GITEA_VERSION#v} -X 'main.Tags=$gitea_tags'" \
			-o "$gitea_dir/gitea.tmp" .)
		mv "$gitea_dir/gitea.tmp" "$gitea_dir/gitea"
	fi
	ln -sfn "$gitea_dir/gitea" "$OUT/gitea"
	ln -sfn "$gitea_dir/src" "$OUT/gitea-src"
}

# Flux's source-, kustomize- and helm-controller, run out of cluster by
# test/fluxenv. They have replace directives of their own, hence a wrapper
# module; one for all three, so what they share compiles once.
part_flux() {
	build source-controller "$FLUX_VERSION" "$TOOLS/flux" github.com/fluxcd/source-controller
	build kustomize-controller "$FLUX_VERSION" "$TOOLS/flux" github.com/fluxcd/kustomize-controller
	build helm-controller "$HELM_CONTROLLER_VERSION" "$TOOLS/flux" github.com/fluxcd/helm-controller

	# Their CRDs ship in the module zips (config/crd/bases), at the version of the
	# binaries; the wrapper module has already downloaded them. Copied, not linked,
	# into the cache: the module cache can be cleaned independently of this one.
	crd_dir="$CACHE/flux-crds-$FLUX_VERSION-helm-$HELM_CONTROLLER_VERSION"
	if [[ ! -d $crd_dir ]]; then
		rm -rf "$crd_dir.tmp"
		mkdir -p "$crd_dir.tmp"
		for m in "source-controller@$FLUX_VERSION" "kustomize-controller@$FLUX_VERSION" "helm-controller@$HELM_CONTROLLER_VERSION"; do
			mod=$(cd "$TOOLS/flux" && go mod download -json "github.com/fluxcd/$m" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
			cp "$mod"/config/crd/bases/*.yaml "$crd_dir.tmp/"
		done
		chmod -R u+w "$crd_dir.tmp" # the module cache is read-only
		mv "$crd_dir.tmp" "$crd_dir"
	fi
	ln -sfn "$crd_dir" "$OUT/flux-crds"
}

# Prometheus, the real Prometheus-API server the usage tests query; it scrapes
# the storage simulator's kubelet statistics (test/promenv). Its go.mod has no
# replace directives, so 'go install' at a pinned version works, as for kwok.
# Measured cold here (empty build cache): 288 s, a 105 MB binary.
# VictoriaMetrics v1.151.0 builds in 29 s (18 MB) but answers MetricsQL, its
# own dialect; Prometheus, Thanos, Mimir and Cortex evaluate PromQL with this
# engine, which is what a cluster's usage queries meet.
part_prometheus() {
	local dir="$CACHE/prometheus-$PROMETHEUS_VERSION"
	if [[ ! -x $dir/prometheus ]]; then
		log "building prometheus $PROMETHEUS_VERSION (about 5 minutes cold; cached afterwards in $dir)"
		mkdir -p "$dir"
		GOFLAGS= GOBIN="$dir" go install -trimpath -ldflags "-s -w" "github.com/prometheus/prometheus/cmd/prometheus@$PROMETHEUS_VERSION"
	fi
	ln -sfn "$dir/prometheus" "$OUT/prometheus"
}

# Argo CD: one binary that runs as argocd-server, -repo-server or
# -application-controller (chosen by argv[0] or ARGOCD_BINARY_NAME), run out of
# cluster by test/argoenv. v3.6 needs Go 1.27, so only this module is built with a
# newer toolchain, fetched from the proxy; the project itself stays on the
# machine's Go.
part_argocd() {
	argocd_dir="$CACHE/argocd-$ARGOCD_VERSION"
	(
		export GOTOOLCHAIN=go1.27.3
		build argocd "$ARGOCD_VERSION" "$TOOLS/argocd" github.com/argoproj/argo-cd/v3/cmd \
			"-X github.com/argoproj/argo-cd/v3/common.version=${ARGOCD_VERSION#v}"
	)
	# Its CRDs, and the GPG wrapper script the repo-server runs for every manifest
	# generation (it must be executable and on the repo-server's PATH; the module
	# cache's copy is read-only and not executable), copied next to the binary once.
	for part in crds hack; do
		if [[ ! -d $argocd_dir/$part ]]; then
			src=$(cd "$TOOLS/argocd" && GOTOOLCHAIN=go1.27.3 go mod download -json "github.com/argoproj/argo-cd/v3@$ARGOCD_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
			rm -rf "$argocd_dir/$part.tmp"
			mkdir -p "$argocd_dir/$part.tmp"
			case $part in
			crds) cp "$src"/manifests/crds/*-crd.yaml "$argocd_dir/$part.tmp/" ;;
			hack) cp "$src/hack/git-verify-wrapper.sh" "$argocd_dir/$part.tmp/" ;;
			esac
			chmod -R u+w,a+rX "$argocd_dir/$part.tmp"
			if [[ $part == hack ]]; then chmod +x "$argocd_dir/$part.tmp/git-verify-wrapper.sh"; fi
			mv "$argocd_dir/$part.tmp" "$argocd_dir/$part"
		fi
		ln -sfn "$argocd_dir/$part" "$OUT/argocd-$part"
	done

	# Redis, Argo CD's cache, from Debian. The tests start their own instances on
	# loopback ports; the system service is never used, so it is stopped and disabled
	# if the package started one.
	if ! command -v redis-server >/dev/null; then
		log "installing redis-server (Debian package)"
		sudo=()
		if [[ $(id -u) != 0 ]]; then sudo=(sudo); fi
		export DEBIAN_FRONTEND=noninteractive
		# Quiet unless it fails; a stale package index gets one update and a retry.
		if ! "${sudo[@]}" apt-get install -y -qq redis-server >/dev/null 2>&1; then
			"${sudo[@]}" apt-get update -qq
			"${sudo[@]}" apt-get install -y -qq redis-server >/dev/null
		fi
		if command -v systemctl >/dev/null && systemctl is-enabled redis-server >/dev/null 2>&1; then
			"${sudo[@]}" systemctl disable --now redis-server >/dev/null 2>&1 || true
		fi
		"${sudo[@]}" service redis-server stop >/dev/null 2>&1 || true
	fi
}

# The release and manifest tools (helm, kubeconform, test/release, schemas).
part_tools() {
	bash "$ROOT/test/testenv/tools.sh"
}

# Two lanes side by side: a cold build is long stretches of one-threaded work
# (module downloads, linking, Gitea's cgo sqlite, apt) that leave a core idle,
# and go build's own parallelism is per package. The lanes are balanced by
# measured cold times (core+flux+prometheus against gitea+argocd+tools) and share nothing
# but the Go caches, which are safe for concurrent use. apt runs in one lane only.
lane() {
	local p
	for p in "$@"; do
		if want "$p"; then "part_$p"; fi
	done
}
lane core flux prometheus &
first=$!
lane gitea argocd tools &
second=$!
rc=0
wait "$first" || rc=$?
wait "$second" || rc=$?
if [[ $rc -ne 0 ]]; then
	log "failed (exit $rc); see the messages above"
	exit "$rc"
fi
log "ready in $OUT"
