-- What a repository keeps beside its index, in the database so that a team has one of each:
-- the audit log (one row per call of any front end), analytics counters, the build log, and small
-- named documents (the kept git history, the last bundle, the credential rules' marker). `repodex
-- clean` removes the index and keeps these, as it keeps them in `.repodex/` on the file store.

-- One row per call: the entry as the checked JSON line the file store writes (the same bytes on
-- every store), and its time for `repodex audit --since`.
CREATE TABLE audit_log (
  repo_id             UUID NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  seq                 BIGSERIAL,
  time                TIMESTAMPTZ NOT NULL,
  line                TEXT NOT NULL,
  PRIMARY KEY (repo_id, seq)
);
CREATE INDEX audit_log_time_idx ON audit_log (repo_id, time);

-- Seed 003's counters, added to by every process that searched.
CREATE TABLE repo_analytics (
  repo_id             UUID NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  queries             BIGINT NOT NULL DEFAULT 0,
  hits                BIGINT NOT NULL DEFAULT 0,
  misses              BIGINT NOT NULL DEFAULT 0,
  last_query_ts       TIMESTAMPTZ,
  PRIMARY KEY (repo_id)
);

-- One line per sync or embedding run, for when something went wrong (the newest lines are kept).
CREATE TABLE build_log (
  repo_id             UUID NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  seq                 BIGSERIAL,
  time                TIMESTAMPTZ NOT NULL DEFAULT now(),
  line                TEXT NOT NULL,
  PRIMARY KEY (repo_id, seq)
);

-- Small documents by name, each replaced whole.
CREATE TABLE repo_documents (
  repo_id             UUID NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  name                TEXT NOT NULL,
  body                BYTEA NOT NULL,
  updated_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (repo_id, name)
);
