-- Tool pinning (an upstream's `pinning = "warn" | "hold"`): the definition of each tool an admin
-- approved (or that was trusted on first use), by the hash of what a user relies on (name,
-- title, description, input and output schema, annotations), and the last changed definition
-- an admin rejected, which is then no longer shown as pending.
CREATE TABLE tool_pins (
    upstream TEXT NOT NULL,
    tool TEXT NOT NULL,
    -- NULL while no definition of this tool was ever approved (a new tool that was rejected).
    hash TEXT,
    definition TEXT,
    approved_by TEXT NOT NULL,
    approved_at BIGINT NOT NULL,
    rejected_hash TEXT,
    PRIMARY KEY (upstream, tool)
);
