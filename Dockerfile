# MCP Gateway image: a release build of `mcp-gateway` on a slim Debian, running as a non-root
# user. Node.js and Python are included because most stdio MCP servers are started with npx/uvx.
# The embedding model and ONNX Runtime for semantic tool routing are fetched at build time by the
# project's own script (from PyPI, sha256-checked) into /opt/mcp-gateway/model.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY gateway gateway
COPY registry registry
COPY tests tests
COPY migrations migrations
COPY config config
COPY scripts scripts
RUN cargo build --release --locked -p gateway --bin mcp-gateway
RUN apt-get update && apt-get install -y --no-install-recommends python3-pip \
    && MCP_GATEWAY_MODEL_DIR=/opt/mcp-gateway/model scripts/fetch-model

FROM debian:bookworm-slim
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="mcp-gateway" \
      org.opencontainers.image.description="Many MCP servers behind one Streamable HTTP endpoint" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates nodejs npm python3 python3-venv \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --uid 10001 --user-group --home-dir /tmp --no-create-home gateway
COPY --from=build /src/target/release/mcp-gateway /usr/local/bin/mcp-gateway
COPY config/gateway.toml /etc/mcp-gateway/gateway.toml
COPY --from=build /opt/mcp-gateway/model /opt/mcp-gateway/model
USER 10001:10001
ENV MCP_GATEWAY_LISTEN=0.0.0.0:8080 HOME=/tmp MCP_GATEWAY_MODEL_DIR=/opt/mcp-gateway/model
EXPOSE 8080
ENTRYPOINT ["mcp-gateway"]
CMD ["serve", "--config", "/etc/mcp-gateway/gateway.toml"]
