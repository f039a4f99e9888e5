-- Seed 001 §2.1, with what the one ranker needs beside it. On Citus the primary key must hold the
-- distribution column, so it is (repo_id, id) where the seed has id alone.
CREATE TABLE chunks (
  id                  UUID NOT NULL DEFAULT gen_random_uuid(),
  repo_id             UUID NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  path                TEXT NOT NULL,
  chunk_index         INT NOT NULL,             -- 0-based position within file
  start_line          INT NOT NULL,
  end_line            INT NOT NULL,
  content             TEXT NOT NULL,
  chunk_hash          TEXT NOT NULL,            -- SHA-256(content + chunking params), hex
  last_seen_commit    TEXT NOT NULL,            -- git HEAD when last confirmed present ('' outside git)
  language            TEXT,
  embedding           vector,                   -- NULL until embedded; one dimension per repository
  created_at          TIMESTAMPTZ DEFAULT now(),
  updated_at          TIMESTAMPTZ DEFAULT now(),
  -- The stable id clients hold (uint32), the chunk's token count (BM25 length), and what answers show.
  chunk_id            BIGINT NOT NULL,
  tokens              INT NOT NULL,
  snippet             TEXT NOT NULL,
  symbol              TEXT,
  -- The embedder whose vector `embedding` is (engine, model, dimension), NULL with it.
  embedding_model     TEXT,
  -- The segment holding this chunk's postings (older segments may hold postings of its earlier versions: those do not count).
  segment             BIGINT NOT NULL,
  PRIMARY KEY (repo_id, id),
  UNIQUE (repo_id, path, chunk_index, chunk_hash),
  UNIQUE (repo_id, chunk_id)
);
CREATE INDEX idx_chunks_repo_path ON chunks(repo_id, path);
CREATE INDEX idx_chunks_repo ON chunks(repo_id);
CREATE INDEX idx_chunks_hash ON chunks(repo_id, chunk_hash);
CREATE INDEX idx_chunks_needs_embedding ON chunks(repo_id) WHERE embedding IS NULL;

-- Every candidate file of a repository, indexed or skipped, with the stats change detection compares and its outline.
CREATE TABLE files (
  repo_id             UUID NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  path                TEXT NOT NULL,
  state               TEXT NOT NULL,
  language            TEXT NOT NULL,
  size                DOUBLE PRECISION NOT NULL,
  mtime_ms            DOUBLE PRECISION NOT NULL,
  ctime_ms            DOUBLE PRECISION NOT NULL,
  ino                 DOUBLE PRECISION NOT NULL,
  content_hash        TEXT NOT NULL,
  chunk_count         INT NOT NULL,
  -- How the file was chunked: NULL = by declarations (its outline is complete), else why as text.
  fallback            TEXT,
  -- The declarations of the file (outline), as the engine's symbol records.
  symbols             JSONB NOT NULL,
  PRIMARY KEY (repo_id, path)
);

-- The inverted index, in segments as the embedded store keeps it: each sync writes the postings of
-- the chunks it (re)indexed as a new segment; a posting counts only while its chunk's `segment` is
-- that segment. Segments are merged when there are too many, or too much of them is stale.
CREATE TABLE segments (
  repo_id             UUID NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  segment             BIGINT NOT NULL,
  chunks              INT NOT NULL,
  postings            BIGINT NOT NULL,
  PRIMARY KEY (repo_id, segment)
);

-- One row per (segment, term): the chunk ids holding the term and their frequencies, encoded
-- (ids ascending, varint gaps, varint frequencies). Field terms (path, declared names, commit
-- subjects) sit beside content terms behind a control-character prefix.
CREATE TABLE segment_postings (
  repo_id             UUID NOT NULL,
  term                TEXT NOT NULL,
  segment             BIGINT NOT NULL,
  df                  INT NOT NULL,
  postings            BYTEA NOT NULL,
  PRIMARY KEY (repo_id, term, segment)
);
