-- Semantic tool routing: tool embeddings by model and text hash (replicas and restarts reuse
-- them), and virtual servers.
CREATE TABLE tool_embeddings (
    model TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    -- little-endian f32 values, base64
    vector TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (model, text_hash)
);

CREATE TABLE virtual_servers (
    name TEXT PRIMARY KEY NOT NULL,
    spec TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
