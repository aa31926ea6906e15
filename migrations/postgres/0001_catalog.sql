-- Upstream MCP servers and the catalog of what each one offers.
CREATE TABLE upstreams (
    name TEXT PRIMARY KEY NOT NULL,
    spec TEXT NOT NULL,
    enabled BIGINT NOT NULL DEFAULT 1,
    source TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE catalog_entries (
    upstream TEXT NOT NULL REFERENCES upstreams (name) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    definition TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (upstream, kind, key)
);
