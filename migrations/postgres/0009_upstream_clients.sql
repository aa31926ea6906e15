-- The gateway's own registrations (RFC 7591) at upstreams' authorization servers, one per
-- upstream and issuer, shared by every replica and kept across restarts (before, each process
-- registered again). The client and its secret are sealed by the gateway.
CREATE TABLE upstream_clients (
    upstream TEXT NOT NULL,
    issuer TEXT NOT NULL,
    sealed TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (upstream, issuer)
);
