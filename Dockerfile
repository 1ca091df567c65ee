# syntax=docker/dockerfile:1
#
# seedwarden webhook image: a static binary on distroless, running as nonroot.
#
#   make image     # = docker build --build-arg VERSION=$(git describe --tags --always --dirty) \
#                  #     --build-arg COMMIT=$(git rev-parse HEAD) -t ghcr.io/seedwarden/seedwarden:VERSION .
#
# Multi-platform: docker buildx build --platform linux/amd64,linux/arm64 ...
# (the builder cross-compiles; nothing runs under emulation).

# Base images: by tag here; `make image GO_IMAGE=...@sha256:... BASE_IMAGE=...@sha256:...`
# pins them by digest for a release.
ARG GO_IMAGE=golang:1.26
ARG BASE_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM --platform=$BUILDPLATFORM ${GO_IMAGE} AS builder

ARG TARGETOS=linux
ARG TARGETARCH
ARG VERSION=dev
ARG COMMIT=unknown

WORKDIR /src

# Dependencies first: this layer is reused until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download

COPY cmd/ cmd/
COPY internal/ internal/

# Static (no cgo), reproducible paths (-trimpath), no symbol tables (-s -w),
# version and commit for `webhook version` and the start-up log.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/webhook ./cmd/webhook

# CA certificates, /etc/passwd with nonroot (65532), tzdata; no shell.
FROM ${BASE_IMAGE}

ARG VERSION=dev
ARG COMMIT=unknown
LABEL org.opencontainers.image.title="seedwarden" \
      org.opencontainers.image.description="Admission webhooks that place Gardener Shoots on Seeds and guard every placement" \
      org.opencontainers.image.source="https://github.com/seedwarden/seedwarden" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}"

COPY --from=builder /out/webhook /webhook

USER 65532:65532
# webhook (HTTPS), metrics (HTTPS), health probes (HTTP)
EXPOSE 9443 8443 8081
ENTRYPOINT ["/webhook"]
CMD ["serve"]
