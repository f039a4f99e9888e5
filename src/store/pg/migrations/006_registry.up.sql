-- The repositories a team server serves (`repodex serve --http`): a repository is registered while
-- registered_at is set; its id is the id its index is kept under. Rows of repositories indexed
-- from the CLI alone stay unregistered. The server's own audit log (requests that name no
-- repository) is kept under a row whose root is 'repodex-server:', never registered.
ALTER TABLE repos ADD COLUMN name TEXT;
ALTER TABLE repos ADD COLUMN registered_at TIMESTAMPTZ;
ALTER TABLE repos ADD COLUMN watch BOOLEAN NOT NULL DEFAULT false;
