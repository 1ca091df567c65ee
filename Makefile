# seedwarden. `make help` lists the targets.

# A Go installed in the usual place works even when it is not on PATH.
export PATH := $(PATH):/usr/local/go/bin

GO       ?= go
FUZZTIME ?= 1m
FUZZFLAGS ?=
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse HEAD 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

CONTROLLER_GEN := sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0

# The server that `make run` and `make demo` start: no cluster, the example
# landscape, certificates from ./certs, ports on localhost.
DEV_LANDSCAPE := examples/landscape.yaml
DEV_CONFIG    := examples/config-dev.yaml
SERVE_ARGS    := serve --landscape $(DEV_LANDSCAPE) --config $(DEV_CONFIG)

# `make demo` starts its own server on free ports (0) unless DEMO_PORT (the
# webhook) and DEMO_HEALTH_PORT (readiness) name them; with DEMO_URL it uses
# the running server there instead, once its certificate verifies against
# certs/ca.crt.
DEMO_PORT        ?= 0
DEMO_HEALTH_PORT ?= 0
DEMO_URL         ?=

.PHONY: help build certs run demo test sources tools unit unit-with-apiserver oracle-check difftest chart-check e2e bench lint golangci fuzz generate clean image set-version

# The name column is as wide as the longest target; descriptions wrap to
# $COLUMNS (default 100) under their own column, clear of the names.
help: ## List the targets.
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' -v cols="$${COLUMNS:-100}" '\
	{ name[NR] = $$1; text[NR] = $$2; if (length($$1) > w) w = length($$1) } \
	END { room = cols - w - 4; if (room < 30) room = 30; \
	  for (i = 1; i <= NR; i++) { \
	    n = split(text[i], word, " "); line = ""; lead = sprintf("  %-" w "s  ", name[i]); \
	    for (j = 1; j <= n; j++) { \
	      if (line != "" && length(line) + 1 + length(word[j]) > room) { print lead line; line = ""; lead = sprintf("%" (w + 4) "s", "") } \
	      line = (line == "" ? word[j] : line " " word[j]) } \
	    print lead line } }'

build: ## Build bin/webhook.
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/webhook ./cmd/webhook

# The kubectl plugin is the same binary under kubectl's names: kubectl runs
# kubectl-seedwarden for `kubectl seedwarden`, and kubectl_complete-seedwarden
# to complete it (docs/cli.md). Put bin/ on PATH, or copy the links.
.PHONY: plugin
plugin: build ## Link bin/kubectl-seedwarden (kubectl plugin) and bin/kubectl_complete-seedwarden to bin/webhook.
	ln -sf webhook bin/kubectl-seedwarden
	ln -sf webhook bin/kubectl_complete-seedwarden

certs: ## Make development TLS material in certs/ (kept while valid).
	$(GO) run ./hack/devcerts

run: certs ## Run the webhook server on the example landscape (Ctrl-C stops it).
	$(GO) run -ldflags "$(LDFLAGS)" ./cmd/webhook $(SERVE_ARGS)

demo: build certs ## Start a server on free ports (DEMO_PORT, DEMO_HEALTH_PORT; DEMO_URL: use a running one), send the example Shoots, stop it.
	$(GO) run ./hack/demo $(if $(DEMO_URL),-url $(DEMO_URL),-server "bin/webhook serve --landscape $(DEV_LANDSCAPE)" -config $(DEV_CONFIG) -port $(DEMO_PORT) -health-port $(DEMO_HEALTH_PORT))

test: sources tools unit-with-apiserver oracle-check chart-check e2e ## Everything CI runs: unit tests (with a real kube-apiserver and Gardener's scheduler as oracle where they need them), conformance and differential counts, the oracle's own check, chart check, e2e on both gardens.

# The pinned sources the Go module proxy does not serve are looked up first, in
# seconds, so a clone without them fails before any long build, naming where
# each can come from (docs/testing.md).
sources: ## Look up Gardener's pinned source (GARDENER_SRC, the tarball beside the clone, git) and cert-manager's (CERT_MANAGER_SRC, ../shared/cert-manager); builds nothing.
	@ok=1; bash hack/gardener-src.sh --check || ok=; bash hack/cert-manager-bins.sh --check || ok=; test -n "$$ok"

tools: sources ## Build kube-apiserver, etcd, promtool and Prometheus from the Go module proxy, and Gardener's and cert-manager's programs from their pinned sources, into .cache (once per machine).
	@bash hack/e2e-tools.sh >/dev/null
	@bash hack/rules/promtool.sh >/dev/null
	@bash hack/rules/promtool.sh prometheus >/dev/null
	@bash hack/gardener-bins.sh >/dev/null
	@bash hack/cert-manager-bins.sh >/dev/null

# Unit tests that need an API server (CRD install, serve --kubeconfig, the
# pending controller, manifests dry-run) find it through KUBEBUILDER_ASSETS,
# and TestDifferential finds Gardener's scheduler (the decide oracle) through
# SEEDWARDEN_GARDENER_BIN; `make test` always provides both, so none of them
# skips there.
# (A script's output is taken apart only after it succeeded: in $$(a | tail -1)
# a failing script would pass an empty path on.)
unit-with-apiserver:
	$(GO) vet ./...
	@assets=$$(bash hack/e2e-tools.sh) && bins=$$(bash hack/gardener-bins.sh) || exit 1; \
	set -x; KUBEBUILDER_ASSETS="$$(printf '%s\n' "$$assets" | tail -1)" \
		SEEDWARDEN_GARDENER_BIN="$$(printf '%s\n' "$$bins" | tail -1)" \
		$(GO) test -race -count=1 ./...
	@bins=$$(bash hack/gardener-bins.sh) || exit 1; \
	out=$$(SEEDWARDEN_GARDENER_BIN="$$(printf '%s\n' "$$bins" | tail -1)" \
		$(GO) test -count=1 -run 'TestConformance$$|TestDifferential$$|TestDifferentialMutants$$' -v ./internal/placement) || { printf '%s\n' "$$out"; exit 1; }; \
	printf '%s\n' "$$out" | grep -E '^(conformance|differential):'

# The module that links Gardener (hack/gardener) is checked on its own: vet,
# and the oracle against the recorded corpus under both network rules.
GARDENER_GO := cd hack/gardener && GOWORK=off GOFLAGS="-mod=mod -trimpath" $(GO)

oracle-check: ## Vet hack/gardener; the decide oracle must reproduce the public corpus (both network rules).
	@bash hack/gardener-bins.sh >/dev/null
	$(GARDENER_GO) vet ./...
	$(GARDENER_GO) test -count=1 ./...
	@overlay=$$(bash hack/gardener-bins.sh --overlay) || exit 1; overlay=$$(printf '%s\n' "$$overlay" | tail -1); \
	test -f "$$overlay" || { echo "no Disjoint overlay: $$overlay" >&2; exit 1; }; \
	set -x; $(GARDENER_GO) test -count=1 -overlay "$$overlay" ./cmd/decide

# Seedwarden's placement against Gardener's scheduler on N generated scenarios
# from SEED and MUTANTS mutants of the recorded scenarios (make test runs the
# default 2,000 of TestDifferential and 400 of TestDifferentialMutants).
N       ?= 20000
MUTANTS ?= 8000
SEED    ?=
difftest: ## Longer differential search: N (default 20000) generated scenarios and MUTANTS (8000) corpus mutants from SEED against Gardener's scheduler.
	@bins=$$(bash hack/gardener-bins.sh) || exit 1; set -x; \
	SEEDWARDEN_GARDENER_BIN="$$(printf '%s\n' "$$bins" | tail -1)" SEEDWARDEN_DIFFTEST_N=$(N) SEEDWARDEN_DIFFTEST_MUTANTS=$(MUTANTS) SEEDWARDEN_DIFFTEST_SEED=$(SEED) \
		$(GO) test -count=1 -timeout 60m -run 'TestDifferential$$|TestDifferentialMutants$$' -v ./internal/placement

unit: ## Fast loop: vet and unit tests; tests needing kube-apiserver skip unless .cache has it.
	$(GO) vet ./... && $(GO) test -race -count=1 ./...

# The Helm chart against the kustomize base (drift), and what `helm lint`
# checks, with Helm's and kustomize's Go packages: hack/chartcheck is a module
# of its own, so their dependencies stay out of seedwarden's build.
CHARTCHECK_DIR := hack/chartcheck

chart-check: ## Chart vs. kustomize base with default values (no drift), helm-lint checks, every option rendered.
	cd $(CHARTCHECK_DIR) && $(GO) vet ./... && $(GO) test -count=1 ./...

# The image, tagged with `git describe` (the release tag on a clean checkout
# of it). GO_IMAGE and BASE_IMAGE may name the base images by digest.
IMAGE      ?= ghcr.io/seedwarden/seedwarden
DOCKER     ?= docker
GO_IMAGE   ?=
BASE_IMAGE ?=

image: ## Build the container image $(IMAGE):$(VERSION) (VERSION from git describe).
	$(DOCKER) build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) \
		$(if $(GO_IMAGE),--build-arg GO_IMAGE=$(GO_IMAGE)) $(if $(BASE_IMAGE),--build-arg BASE_IMAGE=$(BASE_IMAGE)) \
		-t $(IMAGE):$(VERSION) .

# A release: make set-version VERSION=v0.2.0, commit, tag v0.2.0, make image.
# The chart's version and appVersion, the kustomize base's image tag and
# deployment.yaml's image move together (make chart-check checks they agree).
set-version: ## Pin VERSION=vX.Y.Z in the chart and the kustomize base (before tagging a release).
	@echo '$(VERSION)' | grep -Eq '^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$$' || \
		{ echo 'VERSION=$(VERSION): want vMAJOR.MINOR.PATCH, e.g. make set-version VERSION=v0.2.0' >&2; exit 2; }
	sed -i -E 's/^version: .*/version: $(patsubst v%,%,$(VERSION))/; s/^appVersion: .*/appVersion: "$(VERSION)"/' charts/seedwarden/Chart.yaml
	sed -i -E 's/^(  newTag: ).*/\1$(VERSION)/' deploy/manifests/kustomization.yaml
	sed -i -E 's#^(        image: $(IMAGE_BASE_NAME):).*#\1$(VERSION)#' deploy/manifests/deployment.yaml

# The image name the manifests and the chart refer to (overlays change it).
IMAGE_BASE_NAME := ghcr.io/seedwarden/seedwarden

# kube-apiserver and etcd come from hack/e2e-tools.sh: built from the Go module
# proxy once per machine (a few minutes), cached under .cache/e2e-tools.
# The suite runs once per placement mode (SEEDWARDEN_E2E_PLACEMENT): binding,
# the default, and patch.
E2E_PLACEMENT_MODES ?= binding patch
# The API servers the suite runs on: crd (envtest's kube-apiserver serving
# e2e/crds) and gardener (a real gardener-apiserver, hack/gardener/cmd/garden).
E2E_TARGETS ?= crd gardener
# parallel: a lane per target and one for the install package at the same
# time (hack/e2e.sh); sequential: one after another.
E2E_LANES ?= parallel
# On the gardener target, mode patch runs only the tests whose outcome
# depends on the mode; the others mean the same in both (e2e/README.md).
E2E_GARDENER_PATCH_RUN ?= TestPatchModeNeedsBindingPermission|TestPlacement$$|TestConcurrentCreatesNeverOverfill|TestRefusedCreate|TestOversizedBurstStoresNone|TestRecreatesOfPendingNamesHoldNoPlaces|TestDeletedShootsHoldNoPlacesOnAFollower

e2e: ## End-to-end tests: the webhook as a process on a real kube-apiserver + etcd (CRD target) and on a real gardener-apiserver (gardener target), per placement mode; and the install package with the real cert-manager once; a lane per target and one for the install package, at the same time (E2E_LANES=sequential: one after another; e2e/README.md).
	@GO='$(GO)' E2E_TARGETS='$(E2E_TARGETS)' E2E_PLACEMENT_MODES='$(E2E_PLACEMENT_MODES)' \
		E2E_GARDENER_PATCH_RUN='$(E2E_GARDENER_PATCH_RUN)' E2E_LANES='$(E2E_LANES)' bash hack/e2e.sh

BENCH_LARGE ?=
BENCH_APISERVER ?=
bench: ## Every benchmark of BENCHMARKS.md: the Go benchmarks (-benchmem), then the HTTP load test (BENCH_LARGE=1 adds the 1M-Shoot cache sync; BENCH_APISERVER=100000 the real API-server sync; make bench-e2e the CREATE latency).
	SEEDWARDEN_BENCH_LARGE=$(BENCH_LARGE) SEEDWARDEN_BENCH_APISERVER=$(BENCH_APISERVER) $(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) run ./hack/httpbench $(BENCH_HTTP_ARGS)

lint: ## Check formatting (gofmt) and vet.
	@files=$$(gofmt -l $$(find . -name '*.go' -not -path './.cache/*' -not -path './bin/*')); \
	if [ -n "$$files" ]; then echo "gofmt would change:"; echo "$$files"; exit 1; fi
	$(GO) vet ./...

GOLANGCI_LINT_VERSION := v2.15.0

golangci: ## golangci-lint (.golangci.yml), built from source into .cache/tools on first use.
	@test -x .cache/tools/bin/golangci-lint || GOBIN=$(CURDIR)/.cache/tools/bin $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	.cache/tools/bin/golangci-lint run ./...

fuzz: ## Run every fuzz target for FUZZTIME each (default 1m).
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$target"; \
	    $(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $(FUZZFLAGS) $$pkg; \
	  done; \
	done

generate: ## Regenerate deepcopy functions, the CRDs of the e2e tests, the SeedAutoscaler and SeedDrain CRDs and the chart's schema of config.
	$(GO) run $(CONTROLLER_GEN) object paths="./internal/api/...;./internal/autoscalingapi/...;./internal/operationsapi/..."
	bash hack/crds/generate.sh
	bash hack/crds/autoscaler.sh
	bash hack/crds/seeddrain.sh
	$(GO) run ./hack/configschema

clean: ## Remove build output.
	rm -rf bin

.PHONY: bench-http bench-e2e
# What bench-e2e runs: all, createlatency (TestCreateLatencyWebhooks, both
# placement modes) or sidebyside (TestBindSideBySide on the gardener target).
BENCH_E2E ?= all
# A file the side-by-side benchmark writes its markdown report to.
BENCH_E2E_OUT ?=
# The side-by-side benchmark's shapes and loads (e2e/README.md), e.g.
# "limit:20,burst;limit,replicas=3:burst"; empty: every shape of issue 40.
BENCH_E2E_SHAPES ?=
# 1: the side-by-side benchmark at a fifth of its sizes (a smoke run).
BENCH_E2E_QUICK ?=
# A directory for CPU profiles of gardener-apiserver and kube-apiserver, one
# per measured phase of the side-by-side benchmark (e2e/README.md).
BENCH_E2E_PROFILES ?=
bench-e2e: ## Shoot CREATE latency with and without the webhooks (BENCHMARKS.md §11; about 3 minutes per placement mode), then gardener-scheduler against seedwarden binding side by side on a real gardener-apiserver in issue 40's shapes (BENCH_E2E=createlatency|sidebyside runs one part; BENCH_E2E_SHAPES picks shapes, BENCH_E2E_QUICK=1 shrinks them).
	@case "$(BENCH_E2E)" in all|createlatency|sidebyside) ;; *) echo "BENCH_E2E=$(BENCH_E2E): want all, createlatency or sidebyside"; exit 1;; esac; \
	assets=$$(bash hack/e2e-tools.sh) || exit 1; assets=$$(printf '%s\n' "$$assets" | tail -1); \
	if [ "$(BENCH_E2E)" != sidebyside ]; then \
		for mode in binding patch; do KUBEBUILDER_ASSETS="$$assets" SEEDWARDEN_E2E=1 SEEDWARDEN_E2E_BENCH=1 SEEDWARDEN_E2E_PLACEMENT=$$mode $(GO) test -count=1 -v -timeout 20m -run TestCreateLatencyWebhooks ./e2e/ || exit 1; done; \
	fi; \
	if [ "$(BENCH_E2E)" != createlatency ]; then \
		bins=$$(bash hack/gardener-bins.sh) || exit 1; bins=$$(printf '%s\n' "$$bins" | tail -1); \
		KUBEBUILDER_ASSETS="$$assets" SEEDWARDEN_E2E=1 SEEDWARDEN_E2E_BENCH=1 SEEDWARDEN_E2E_GARDEN=gardener SEEDWARDEN_E2E_PLACEMENT=binding \
			SEEDWARDEN_E2E_GARDEN_BIN="$$bins/garden" SEEDWARDEN_E2E_GARDENER_SCHEDULER_BIN="$$bins/gardener-scheduler" SEEDWARDEN_E2E_BENCH_OUT="$(if $(BENCH_E2E_OUT),$(abspath $(BENCH_E2E_OUT)))" \
			SEEDWARDEN_E2E_BENCH_SHAPES="$(BENCH_E2E_SHAPES)" SEEDWARDEN_E2E_BENCH_QUICK="$(BENCH_E2E_QUICK)" \
			SEEDWARDEN_E2E_BENCH_PROFILES="$(if $(BENCH_E2E_PROFILES),$(abspath $(BENCH_E2E_PROFILES)))" \
			$(GO) test -count=1 -v -timeout 150m -run 'TestBindSideBySide$$' ./e2e/ || exit 1; \
	fi

bench-http: ## HTTP benchmark: the server over TLS vs. an empty controller-runtime webhook (hack/httpbench).
	$(GO) run ./hack/httpbench $(BENCH_HTTP_ARGS)
