import type { AuditStore } from './control.js';

/** A repository a team server serves. */
export interface RegisteredRepo {
  /** The id requests name it by: a UUID (on PostgreSQL, the id of its `repos` row). */
  readonly repo_id: string;
  /** Its root, absolute, as the server's machine sees it. */
  readonly root: string;
  /** A short name for people (the folder's name unless given). */
  readonly name: string;
  /** When it was registered (ISO 8601, UTC). */
  readonly added_at: string;
  /** Whether the server re-indexes it as files change (`POST /repo/watch`), kept across restarts. */
  readonly watch: boolean;
}

/**
 * The repositories a server serves, kept by its store: a file in the server's folder on the
 * embedded store, rows of the `repos` table on PostgreSQL (where a repository's id is the id its
 * index is kept under). Beside them, the server's own audit log: requests that name no repository
 * (a list, a refused token, an unknown id) are recorded there.
 */
export interface RepoRegistry {
  /** Where the registry is, as messages name it. */
  readonly where: string;
  /** The server's own requests (those of a repository go to that repository's log). */
  readonly audit: AuditStore;
  /** Every registered repository, in the order they were added. */
  list(): Promise<RegisteredRepo[]>;
  /** Register `root` (already checked and made absolute); a root already there keeps its id. */
  add(root: string, name: string): Promise<{ readonly repo: RegisteredRepo; readonly created: boolean }>;
  /** Stop serving a repository (its index stays); false when the id is not registered. */
  remove(repoId: string): Promise<boolean>;
  /** Keep whether a repository is watched. */
  setWatch(repoId: string, watch: boolean): Promise<void>;
}
