-- The repositories a database indexes (seed 001 §2.2), one row each, found by the root they index.
-- A reference table on Citus (every node holds a copy): it has no repo_id to distribute by.
CREATE TABLE repos (
  id                  UUID PRIMARY KEY DEFAULT gen_random_uuid(),
  root                TEXT NOT NULL UNIQUE,
  created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
  last_indexed_commit TEXT,
  index_status        TEXT NOT NULL DEFAULT 'pending' CHECK (index_status IN ('pending', 'indexing', 'ready', 'stale')),
  last_indexed_at     TIMESTAMPTZ,
  -- Increases by one with every committed sync: what readers compare to know the index changed.
  generation          BIGINT NOT NULL DEFAULT 0,
  -- The commit record of the current generation (what `.repodex/meta.json` holds on the file store).
  meta                JSONB,
  -- The walk behind the current generation (folders and git control files with their stats) and the paths git saw dirty.
  tree                JSONB,
  -- The semantic manifest: what made the vectors and what they cover.
  vector_manifest     JSONB
);
