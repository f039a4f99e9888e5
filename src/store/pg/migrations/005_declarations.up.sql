-- What a search needs of each file's outline to name the declaration its matched lines sit in:
-- every symbol's [start line, end line, kind, name, parent], as compact JSON text. Views load it
-- with the catalog, so a search asks the database nothing for it. NULL in rows written before
-- this migration: those files' outlines are read on demand instead, until a sync rewrites them.
ALTER TABLE files ADD COLUMN declarations TEXT;
