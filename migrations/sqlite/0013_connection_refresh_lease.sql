-- Until when a replica refreshes a connection's tokens (ms): the others wait for its tokens
-- instead of refreshing too, since a provider that rotates refresh tokens takes a spent one
-- used again for a theft and revokes the user's grant. A crashed replica's lease lapses.
ALTER TABLE upstream_connections ADD COLUMN refreshing_until BIGINT;
