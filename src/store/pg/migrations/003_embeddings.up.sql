-- The vectors each embedder made, keyed by chunk hash (seed 001: same hash, never embedded again,
-- also after its file moved or was rebuilt). `chunks.embedding` mirrors the current embedder's.
CREATE TABLE embeddings (
  repo_id             UUID NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  -- engine/model/dimension of the embedder that made it
  model               TEXT NOT NULL,
  chunk_hash          TEXT NOT NULL,
  dim                 INT NOT NULL,
  embedding           vector NOT NULL,
  created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (repo_id, model, chunk_hash)
);

-- Who holds a repository's writer or vectors lock, for `status` (the lock itself is an advisory lock).
CREATE TABLE repo_locks (
  repo_id             UUID NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  kind                TEXT NOT NULL,
  pid                 INT NOT NULL,
  host                TEXT NOT NULL,
  started             TIMESTAMPTZ NOT NULL DEFAULT now(),
  backend_pid         INT NOT NULL,
  PRIMARY KEY (repo_id, kind)
);
