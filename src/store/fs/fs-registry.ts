import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkedJsonText, readCheckedJson } from '../../core/checked-json.js';
import { RepodexError, isErrnoException } from '../../core/errors.js';
import { withFileLock } from '../../core/file-lock.js';
import { writeFileAtomic } from '../../core/fs-atomic.js';
import type { RegisteredRepo, RepoRegistry } from '../registry.js';
import { FileAuditLog } from './fs-control.js';

/** The registry's file in the server's folder. */
export const REGISTRY_FILE = 'repos.json';

/**
 * The registry of a server on the embedded store: `repos.json` in the server's folder (checked
 * JSON, replaced atomically under a lock file, so two servers sharing a folder never lose each
 * other's change), and the server's own audit log beside it (`audit.jsonl`). Each repository's
 * index stays in its own `.repodex/`, where the CLI finds it too.
 */
export class FileRegistry implements RepoRegistry {
  readonly where: string;
  readonly audit: FileAuditLog;

  constructor(private readonly folder: string) {
    this.where = join(folder, REGISTRY_FILE);
    this.audit = new FileAuditLog(folder, true);
  }

  async list(): Promise<RegisteredRepo[]> {
    return this.read();
  }

  async add(root: string, name: string): Promise<{ repo: RegisteredRepo; created: boolean }> {
    let result: { repo: RegisteredRepo; created: boolean } | undefined;
    this.update((repos) => {
      const known = repos.find((repo) => repo.root === root);
      if (known) {
        result = { repo: known, created: false };
        return undefined;
      }
      const repo: RegisteredRepo = { repo_id: randomUUID(), root, name, added_at: new Date().toISOString(), watch: false };
      result = { repo, created: true };
      return [...repos, repo];
    });
    return result!;
  }

  async remove(repoId: string): Promise<boolean> {
    let removed = false;
    this.update((repos) => {
      removed = repos.some((repo) => repo.repo_id === repoId);
      return removed ? repos.filter((repo) => repo.repo_id !== repoId) : undefined;
    });
    return removed;
  }

  async setWatch(repoId: string, watch: boolean): Promise<void> {
    this.update((repos) => (repos.some((repo) => repo.repo_id === repoId && repo.watch !== watch) ? repos.map((repo) => (repo.repo_id === repoId ? { ...repo, watch } : repo)) : undefined));
  }

  /** Read, change and write back under the lock; `change` returns undefined to write nothing. */
  private update(change: (repos: RegisteredRepo[]) => RegisteredRepo[] | undefined): void {
    mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    const done = withFileLock(this.where, () => {
      const next = change(this.read());
      if (next) writeFileAtomic(this.where, checkedJsonText({ version: 1, repos: next }), this.folder);
    });
    if (!done) throw new RepodexError('LOCKED', `${this.where} is being changed by another server: try again in a moment`, { selfContained: true });
  }

  private read(): RegisteredRepo[] {
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.where);
    } catch (error) {
      if (isErrnoException(error, 'ENOENT')) return [];
      throw error;
    }
    let body: Record<string, unknown>;
    try {
      body = readCheckedJson(bytes, this.where);
    } catch (error) {
      // Registrations cannot be rebuilt from anything: never start over silently.
      throw new RepodexError('CONFIG_INVALID', `${(error as Error).message.replace(/ \(.*\)$/, '')}; the server will not start over without the repositories it lists: restore the file, or move it away to start with none`, { selfContained: true });
    }
    const repos = body.repos;
    if (body.version !== 1 || !Array.isArray(repos)) throw new RepodexError('CONFIG_INVALID', `${this.where} was written by another version of repodex: upgrade repodex, or move it away to start with no repositories`, { selfContained: true });
    return repos as RegisteredRepo[];
  }
}
