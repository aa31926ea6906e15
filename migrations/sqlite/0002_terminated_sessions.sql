-- Sessions a host ended with DELETE: no replica may bring them back from their session id.
CREATE TABLE terminated_sessions (
    id_hash TEXT PRIMARY KEY NOT NULL,
    terminated_at BIGINT NOT NULL
);
