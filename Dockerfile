# MCP Gateway image: a release build of `mcp-gateway` on a slim Debian, running as a non-root
# user. Node.js and Python are included because most stdio MCP servers are started with npx/uvx.
# (The embedding model and ONNX Runtime join the image with semantic routing, issue 4.)
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY gateway gateway
COPY registry registry
COPY tests tests
COPY migrations migrations
COPY config config
RUN cargo build --release --locked -p gateway --bin mcp-gateway

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates nodejs npm python3 python3-venv \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --uid 10001 --user-group --home-dir /tmp --no-create-home gateway
COPY --from=build /src/target/release/mcp-gateway /usr/local/bin/mcp-gateway
COPY config/gateway.toml /etc/mcp-gateway/gateway.toml
USER 10001:10001
ENV MCP_GATEWAY_LISTEN=0.0.0.0:8080 HOME=/tmp
EXPOSE 8080
ENTRYPOINT ["mcp-gateway"]
CMD ["serve", "--config", "/etc/mcp-gateway/gateway.toml"]
