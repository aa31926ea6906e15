-- When a replica last found a stored vector in use (a tool of its catalog has that text): the
-- vectors of texts no tool has any more (a description edited, an upstream removed, another
-- model) are forgotten after a while instead of kept for good. NULL: not marked since it was
-- stored, so its `created_at` counts.
ALTER TABLE tool_embeddings ADD COLUMN used_at BIGINT;
