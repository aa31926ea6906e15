-- The gateway's own OAuth authorization server (auth.server): its signing keys, the clients
-- registered with it, users' consents, the grants (one per authorization: the family of its
-- refresh tokens), and the one-time codes and refresh tokens, of which only hashes are kept.
CREATE TABLE oauth_keys (
    kid TEXT PRIMARY KEY NOT NULL,
    -- The Ed25519 seed (base64url). Keys live in the store so that every replica signs and
    -- verifies with the same ones.
    secret TEXT NOT NULL,
    public_x TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    retired_at BIGINT
);

CREATE TABLE oauth_clients (
    client_id TEXT PRIMARY KEY NOT NULL,
    metadata TEXT NOT NULL,
    secret_hash TEXT,
    -- `dcr`, `config`, `api` or `cimd`.
    source TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    blocked_at BIGINT
);

CREATE TABLE oauth_consents (
    subject TEXT NOT NULL,
    client_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (subject, client_id)
);

CREATE TABLE oauth_grants (
    id TEXT PRIMARY KEY NOT NULL,
    subject TEXT NOT NULL,
    client_id TEXT NOT NULL,
    roles TEXT NOT NULL,
    scope TEXT NOT NULL,
    resource TEXT NOT NULL,
    -- How the user signed in (`pat:<id>` or `oidc:<issuer>`).
    signed_in_with TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX oauth_grants_subject ON oauth_grants (subject);
CREATE INDEX oauth_grants_client ON oauth_grants (client_id);

CREATE TABLE oauth_codes (
    code_hash TEXT PRIMARY KEY NOT NULL,
    grant_id TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
);

CREATE TABLE oauth_refresh_tokens (
    token_hash TEXT PRIMARY KEY NOT NULL,
    grant_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
);
CREATE INDEX oauth_refresh_grant ON oauth_refresh_tokens (grant_id);
