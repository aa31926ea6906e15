-- `seq` becomes SQLite's rowid. Declared `BIGINT PRIMARY KEY`, it was a separate unique index
-- beside the table's own B-tree, one more B-tree written for every audit row; only `INTEGER
-- PRIMARY KEY` names the rowid itself (docs/benchmarks.md, "eleventh round"). The rows, their
-- hashes and the three query indexes are kept as they were.
CREATE TABLE audit_log_rowid (
    seq INTEGER PRIMARY KEY NOT NULL,
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
INSERT INTO audit_log_rowid (seq, at, principal, token_id, session, action, upstream, target,
        outcome, error_class, latency_ms, arguments, prev_hash, hash)
    SELECT seq, at, principal, token_id, session, action, upstream, target, outcome,
        error_class, latency_ms, arguments, prev_hash, hash
    FROM audit_log ORDER BY seq;
DROP TABLE audit_log;
ALTER TABLE audit_log_rowid RENAME TO audit_log;
CREATE INDEX audit_log_principal ON audit_log (principal, at);
CREATE INDEX audit_log_target ON audit_log (target, at);
CREATE INDEX audit_log_at ON audit_log (at);
