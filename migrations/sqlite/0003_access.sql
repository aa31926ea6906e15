-- Roles (grants over upstreams, tools, resources, prompts; admin right) and personal access
-- tokens, of which only a hash is kept.
CREATE TABLE roles (
    name TEXT PRIMARY KEY NOT NULL,
    spec TEXT NOT NULL,
    source TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE access_tokens (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    owner TEXT NOT NULL,
    roles TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    last_used_at BIGINT,
    revoked_at BIGINT
);

-- The audit log: one row per call and admin change, each chained to the one before by hash.
CREATE TABLE audit_log (
    seq BIGINT PRIMARY KEY NOT NULL,
    at BIGINT NOT NULL,
    principal TEXT NOT NULL,
    token_id TEXT,
    session TEXT,
    action TEXT NOT NULL,
    upstream TEXT,
    target TEXT,
    outcome TEXT NOT NULL,
    error_class TEXT,
    latency_ms BIGINT NOT NULL,
    arguments TEXT,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX audit_log_principal ON audit_log (principal, at);
CREATE INDEX audit_log_target ON audit_log (target, at);
CREATE INDEX audit_log_at ON audit_log (at);

-- The end of the chain: writers lock this row, so replicas append one batch at a time.
CREATE TABLE audit_head (
    id BIGINT PRIMARY KEY NOT NULL,
    seq BIGINT NOT NULL,
    hash TEXT NOT NULL
);
INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, '');
