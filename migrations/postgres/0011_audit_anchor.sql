-- Where the audit chain starts once rows past their retention (`audit.retention_days`) are
-- removed: the last removed row's sequence number and hash. `audit verify` chains from here,
-- so a row removed by other means is still reported missing. Writers never touch it.
CREATE TABLE audit_anchor (
    id BIGINT PRIMARY KEY NOT NULL,
    seq BIGINT NOT NULL,
    hash TEXT NOT NULL
);
INSERT INTO audit_anchor (id, seq, hash) VALUES (1, 0, '');
