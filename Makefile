# claimwarden — build, test, lint, demo. `make help` lists the targets.
SHELL := /usr/bin/env bash
GO ?= go
# The toolchain go.mod names (a patch release with the standard library's
# security fixes), fetched from the module proxy: the go command on these
# machines defaults to GOTOOLCHAIN=local and would otherwise build with its own.
export GOTOOLCHAIN := $(shell sed -n 's/^toolchain //p' go.mod)
BIN := $(CURDIR)/bin
TESTENV := $(BIN)/testenv
CONTROLLER_GEN := $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOVULNCHECK := GOFLAGS= $(GO) run golang.org/x/vuln/cmd/govulncheck@v1.9.0
# Packages whose code runs goroutines of its own: `make test` runs their tests
# once more under the race detector.
RACE_PKGS := ./policies/... ./reconciler/proposal/... ./reconciler/source/... ./reconciler/gate/... ./reconciler/outcome/... ./integrations/... ./cmd/claimwarden/app/check/...
# Go fuzz targets as package:Target: `make fuzz` runs each for FUZZTIME.
# `make test` replays their seeds and committed corpora (testdata/fuzz) as
# ordinary tests; fuzzing itself builds an instrumented binary per package,
# minutes on a cold machine, so it is `make fuzz`'s.
FUZZ_TARGETS := \
	./integrations/manifests:FuzzDecode \
	./reconciler/diff:FuzzBytes ./reconciler/diff:FuzzOrdinals \
	./reconciler/proposal:FuzzRedactURL ./reconciler/proposal:FuzzCanonicalRepositoryURL ./reconciler/proposal:FuzzParseRevision \
	./integrations/githost:FuzzParseRepositoryURL \
	./integrations/argocd:FuzzDecodeManagedStatefulSets \
	./integrations/flux:FuzzBudgetSpend \
	./policies:FuzzDecodeJSON ./policies:FuzzEncodeInput
FUZZTIME ?= 60s
# The scale tiers of `make bench` (test/scale -tiers): 600 PVCs with one claim
# of a StatefulSet resized at a time and with all three (as the manual
# procedure does), then 6,000 PVCs over 20 namespaces and in one, then 600
# PVCs in a big cluster's crowd (50,000 other Pods, 20,000 other PVCs, 30,000
# Secrets, 10,000 ConfigMaps).
SCALE_TIERS ?= 200x3/10,200x3/10@3,2000x3/20@3,2000x3/1@3,200x3/10@3+crowd
# Each tier's runs, for the median of its ratios to the manual procedure
# (SCALE_RUNS=3 about triples make bench).
SCALE_RUNS ?= 1
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# Static (no cgo: nothing in the module needs it, and the image has no libc),
# stripped, without local paths, with the version stamped: 60 MB instead of
# 159 MB, and the same bytes from any checkout.
LDFLAGS := -s -w -X github.com/claimwarden/claimwarden/cmd/claimwarden/app.Version=$(VERSION)
GOBUILD := CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)"
# Release: the image's platforms; REGISTRY (e.g. ghcr.io/claimwarden, or
# 127.0.0.1:5000 with INSECURE=1) makes `make image` push there.
PLATFORMS := linux/amd64 linux/arm64
DIST := $(CURDIR)/dist
REGISTRY ?=
INSECURE ?=
IMAGE_REPO := $(if $(REGISTRY),$(REGISTRY)/claimwarden,ghcr.io/claimwarden/claimwarden)
# Stamped on the image and the SBOMs: the commit's time, so a rebuild of a
# commit gives the same digest.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
RELEASE_TOOL := $(TESTENV)/release
COSIGN_KEY ?=

.PHONY: help build build-chaos chaos chaos-storm testenv tools image release test fuzz lint generate demo demo-flux demo-helm demo-argocd demo-autoresize bench bench-spokes bench-autoresize compat clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

build: ## build bin/claimwarden (static)
	$(GOBUILD) -o $(BIN)/claimwarden ./cmd/claimwarden

build-chaos: ## build bin/claimwarden-chaos: the controller with the chaos run's crash points (reconciler/crashpoint)
	CGO_ENABLED=0 $(GO) build -trimpath -tags chaos -ldflags "$(LDFLAGS)" -o $(BIN)/claimwarden-chaos ./cmd/claimwarden

testenv: ## build the test environment (etcd, kube-*, kubectl, kwok, Gitea, Flux, Argo CD, Prometheus, tools) into bin/testenv
	bash test/testenv/build.sh

tools: ## build helm, kubeconform and test/release into bin/testenv (make testenv does too)
	bash test/testenv/tools.sh

image: tools ## static binaries for PLATFORMS, their OCI image in dist/image and dist/claimwarden-image.oci.tar, SPDX SBOMs; pushed when REGISTRY is set
	rm -rf $(DIST)/bin $(DIST)/image $(DIST)/*.spdx.json
	@set -e; for p in $(PLATFORMS); do \
		echo "build $$p"; \
		GOOS=$${p%/*} GOARCH=$${p#*/} $(GOBUILD) -o $(DIST)/bin/$${p/\//-}/claimwarden ./cmd/claimwarden; \
		$(RELEASE_TOOL) sbom -binary $(DIST)/bin/$${p/\//-}/claimwarden -version $(VERSION) \
			-ca-certificates-version $$(cat $(TESTENV)/ca-certificates/version) \
			-source-date-epoch $(SOURCE_DATE_EPOCH) -out $(DIST)/claimwarden-$${p/\//-}.spdx.json; \
	done
	$(RELEASE_TOOL) image -version $(VERSION) -revision $$(git rev-parse HEAD) -source-date-epoch $(SOURCE_DATE_EPOCH) \
		-cacerts $(TESTENV)/ca-certificates/ca-certificates.crt -out $(DIST)/image \
		-binaries $$(for p in $(PLATFORMS); do printf '%s=%s,' $$p $(DIST)/bin/$${p/\//-}/claimwarden; done | sed 's/,$$//') \
		>$(DIST)/image.digest
	tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C $(DIST)/image -cf $(DIST)/claimwarden-image.oci.tar .
	@echo "image $(IMAGE_REPO)@$$(cat $(DIST)/image.digest) ($(PLATFORMS)) in $(DIST)/image"
	$(if $(REGISTRY),$(RELEASE_TOOL) push -layout $(DIST)/image -to $(IMAGE_REPO):$(VERSION) $(if $(INSECURE),-insecure))

release: image ## VERSION=v0.x.y: dist/install.yaml (image pinned by digest), the Helm chart, SBOMs, checksums; cosign signatures when COSIGN_KEY is set
	VERSION=$(VERSION) IMAGE_REPO=$(IMAGE_REPO) DIST=$(DIST) COSIGN_KEY=$(COSIGN_KEY) REGISTRY=$(REGISTRY) INSECURE=$(INSECURE) \
		bash test/release/release.sh

generate: ## regenerate deepcopy code and CRD YAML
	$(CONTROLLER_GEN) object paths=./api/... crd:crdVersions=v1 output:crd:artifacts:config=config/crd/bases

test: testenv build build-chaos ## unit and integration tests against the real control plane, then the race detector on the concurrent packages
	$(GO) test -count=1 -timeout 30m ./...
	cd test/release && $(GO) test -count=1 ./...
	$(GO) test -tags chaos -count=1 -timeout 20m -run '^TestChaos$$' ./test/e2e/
	$(GO) test -race -count=1 -timeout 30m $(RACE_PKGS)

# How long the Git host storm of `make chaos-storm` lasts (`make test` runs a
# 30 s one).
STORM ?= 4m

chaos-storm: testenv build ## TestGitHostStorm with a STORM-long (4m) storm of 5xx and 429 from the Git host
	$(GO) test -count=1 -timeout 30m -run '^TestGitHostStorm$$' ./test/e2e/ -args -storm $(STORM)

fuzz: ## run every Go fuzz target for FUZZTIME (60s); a crasher is written to the package's testdata/fuzz
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} ($${t%%:*}, $(FUZZTIME))"; \
		$(GO) test -run XXX -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) $${t%%:*}; \
	done

# The chaos run's size (test/e2e TestChaos, build tag chaos). `make test`
# runs a short one: each fault once, over 2 StatefulSets.
CHAOS_ROLLOUTS ?= 56
CHAOS_STATEFULSETS ?= 4
chaos: testenv build build-chaos ## the chaos run: CHAOS_ROLLOUTS rollouts over CHAOS_STATEFULSETS StatefulSets under controller SIGKILLs, kube-apiserver/etcd restarts, leader handovers and bursts of superseding commits, then a STORM-long Git host storm; the invariant recorder must find nothing
	$(GO) test -tags chaos -count=1 -timeout 120m -run '^(TestChaos|TestChaosArgoCDBurst|TestGitHostStorm)$$' -v ./test/e2e/ -args -chaos.rollouts=$(CHAOS_ROLLOUTS) -chaos.statefulsets=$(CHAOS_STATEFULSETS) -storm $(STORM)

lint: ## go vet, gofmt, staticcheck, govulncheck (offline database from the module proxy)
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(STATICCHECK) ./...
	cd test/release && $(GO) vet ./... && $(STATICCHECK) ./...
	$(GOVULNCHECK) -db file://$$(bash test/testenv/vulndb.sh) ./...

demo: build ## run the whole story locally: control plane, storage simulator, controller, a template bump
	bash test/testenv/build.sh core
	$(GO) run ./test/demo

demo-flux: build ## the same story from commits in a local Gitea, applied by Flux, verdicts back on the commits
	bash test/testenv/build.sh core gitea flux
	$(GO) run ./test/demo -story flux

demo-helm: build ## the same story as chart bumps released by a Flux HelmRelease: helm-controller fails, claimwarden converges and asks it to upgrade again
	bash test/testenv/build.sh core gitea flux
	$(GO) run ./test/demo -story helm

demo-argocd: build ## the same story synced by Argo CD: claimwarden reads Git through its API and syncs once converged
	bash test/testenv/build.sh core gitea argocd tools
	$(GO) run ./test/demo -story argocd

demo-autoresize: build ## a filling volume: Prometheus reads the usage, claimwarden opens a pull request in Gitea, the merge is applied by Flux and grows the claims
	bash test/testenv/build.sh core gitea flux prometheus
	$(GO) run ./test/demo -story autoresize

bench: testenv build ## diff/plan/policy/check benchmarks, then the scale tiers on the real control plane (about 70 minutes)
	$(GO) test -run XXX -bench . -benchmem ./reconciler/...
	$(GO) test -run XXX -bench . -benchmem -cpu 1 ./policies/
	$(GO) test -run XXX -bench Check5000 -benchtime 3x -benchmem ./cmd/claimwarden/app/check/
	$(GO) run ./test/scale -controller $(BIN)/claimwarden -tiers $(SCALE_TIERS) -runs $(SCALE_RUNS) -profile $(BIN)/scale.pprof

# The numbers of simulated spokes `make bench-spokes` measures claimwarden with.
SPOKES ?= 0,1,3,10

bench-spokes: testenv build ## claimwarden on a hub with SPOKES (0,1,3,10) simulated spokes: memory, cache sync, watch streams; first-step latency on a spoke vs in-cluster (a few minutes)
	$(GO) run ./test/spokescale -controller $(BIN)/claimwarden -spokes $(SPOKES)

bench-autoresize: testenv build ## autoresize at fleet size: 1,000 opted-in StatefulSets at rest, then 5% filling: Git host requests and Prometheus queries per round, CPU, peak RSS, time to pull request (about 15 minutes)
	$(GO) run ./test/autoresizescale -controller $(BIN)/claimwarden

compat: testenv build ## the version-dependent tests on each Kubernetes version from 1.30 to 1.37 (KUBE_VERSIONS="v1.30.14 …" picks some); rewrites the support table in docs/kubernetes-versions.md when all ran
	$(GO) run ./test/compat $(if $(KUBE_VERSIONS),-versions "$(KUBE_VERSIONS)")

clean: ## remove build output (the testenv cache outside the repo stays)
	rm -rf $(BIN) $(DIST)
