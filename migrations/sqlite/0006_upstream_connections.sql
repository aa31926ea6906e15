-- Each user's own connection to an upstream behind its own authorization server (an upstream's
-- `user_oauth`), and the designated account its catalog is read with. The tokens and the client
-- they were issued to are sealed by the gateway (an AEAD whose key never reaches the store);
-- the other columns are what admins and users see of a connection.
CREATE TABLE upstream_connections (
    upstream TEXT NOT NULL,
    -- `user:<principal key>` or `catalog`.
    holder TEXT NOT NULL,
    -- The principal key of who connected it (for the catalog: the admin).
    connected_by TEXT NOT NULL,
    sealed TEXT NOT NULL,
    issuer TEXT NOT NULL,
    scope TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    expires_at BIGINT,
    PRIMARY KEY (upstream, holder)
);
