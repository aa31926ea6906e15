# MCP Gateway image: a release build of `mcp-gateway` on a slim Debian, running as a non-root
# user. Node.js 22 (npx) and Python with uv (uvx) are included because most stdio MCP servers
# are started with them: the same runtimes the tests use (scripts/install-peers).
# The embedding model and ONNX Runtime for semantic tool routing are fetched at build time by the
# project's own script (from PyPI, sha256-checked) into /opt/mcp-gateway/model.
#
# The dependencies are built in a layer of their own (cargo-chef's recipe holds only the
# manifests and the lock file): a change to the gateway's code rebuilds the gateway, not the
# ~400 crates under it.
FROM rust:1.95-bookworm AS chef
RUN cargo install cargo-chef --locked --version 0.1.78
WORKDIR /src

FROM chef AS plan
COPY . .
RUN cargo chef prepare --recipe-path recipe.json

FROM chef AS build
COPY --from=plan /src/recipe.json recipe.json
RUN cargo chef cook --release --locked --recipe-path recipe.json -p gateway --bin mcp-gateway
COPY Cargo.toml Cargo.lock ./
COPY gateway gateway
COPY registry registry
COPY tests tests
COPY migrations migrations
COPY config config
COPY scripts scripts
COPY models models
RUN cargo build --release --locked -p gateway --bin mcp-gateway
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip python3-venv \
    && MCP_GATEWAY_MODEL_DIR=/opt/mcp-gateway/model scripts/fetch-model

# Debian's own Node is 18; servers published today want 22.
FROM node:22-bookworm-slim AS node

FROM debian:bookworm-slim
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
ARG UV_VERSION=0.13.9
LABEL org.opencontainers.image.title="mcp-gateway" \
      org.opencontainers.image.description="Many MCP servers behind one Streamable HTTP endpoint" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.vendor="MCP Gateway" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=node /usr/local/lib/node_modules /usr/local/lib/node_modules
# uv from PyPI in a venv of its own; uvx fetches each server's Python packages at run time.
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
    && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
    && apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates python3 python3-venv \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/uv \
    && /opt/uv/bin/pip install --no-cache-dir --disable-pip-version-check "uv==${UV_VERSION}" \
    && ln -s /opt/uv/bin/uv /opt/uv/bin/uvx /usr/local/bin/ \
    && node --version && npx --version && uvx --version \
    && useradd --uid 10001 --user-group --home-dir /tmp --no-create-home gateway \
    && install -d -o 10001 -g 10001 /data
COPY --from=build /src/target/release/mcp-gateway /usr/local/bin/mcp-gateway
COPY config/gateway.toml /etc/mcp-gateway/gateway.toml
COPY --from=build /opt/mcp-gateway/model /opt/mcp-gateway/model
USER 10001:10001
# The bundled config's SQLite file is relative (`sqlite://mcp-gateway.db`): it lands here, where
# the gateway's user may write, and where the chart mounts its data volume.
WORKDIR /data
ENV MCP_GATEWAY_LISTEN=0.0.0.0:8080 HOME=/tmp MCP_GATEWAY_MODEL_DIR=/opt/mcp-gateway/model
# 9090: probes and metrics when MCP_GATEWAY_OPS_LISTEN=0.0.0.0:9090 (chart: service.opsPort).
EXPOSE 8080 9090
# For `docker run` and Compose (Kubernetes uses the chart's probes): the gateway asks its own
# /healthz, on the address its configuration listens on.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["mcp-gateway", "--config", "/etc/mcp-gateway/gateway.toml", "healthcheck"]
ENTRYPOINT ["mcp-gateway"]
CMD ["serve", "--config", "/etc/mcp-gateway/gateway.toml"]
