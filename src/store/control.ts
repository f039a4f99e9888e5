import type { AuditEntry } from './audit-lines.js';

/** Seed 003's counters: how often the index is asked, and how often it had an answer. */
export interface AnalyticsCounts {
  readonly queries: number;
  readonly hits: number;
  readonly misses: number;
  /** ISO 8601 time of the last query, or null. */
  readonly last_query_ts: string | null;
}

/** Counts gathered since the last write, added to the stored ones. */
export interface AnalyticsDelta {
  readonly queries: number;
  readonly hits: number;
  readonly misses: number;
  readonly last: string | null;
}

/** What a check of one part found: what was looked at and what is damaged (each naming its fix). */
export interface PartCheck {
  readonly checked: string[];
  readonly problems: string[];
  readonly notes?: string[];
}

/**
 * The audit log of one repository: one entry per call of any front end. The file store keeps it in
 * `.repodex/audit.jsonl` (rotated); the PostgreSQL store in a table, so a team has one trail.
 * Entries are kept as checked JSON lines (audit-lines.ts) on every store.
 */
export interface AuditStore {
  /** Where the log is, as answers name it (a path, or a table of a database). */
  readonly where: string;
  /** Append entries, in order (a batch is one write). Never throws: a call must not fail because its log line could not be kept. */
  append(...entries: AuditEntry[]): void;
  /** Wait until every entry appended so far is kept (a store that writes in the background). */
  settled(): Promise<void>;
  /**
   * The most recent `limit` entries at or after `from` (epoch ms; all without), oldest first;
   * `total` counts every sound entry that matched, `damaged` the lines left out as damaged.
   */
  read(from: number | undefined, limit: number): Promise<{ entries: AuditEntry[]; total: number; damaged: number }>;
  /** Every line's checksum (`deep`; a store with its own integrity may check less otherwise). */
  check(deep: boolean): Promise<PartCheck>;
  /**
   * Pass every entry through `redact` again (the credential rules grew): entries it changes are
   * replaced, lines that are not entries (damaged, cut by a crash) dropped. Returns a line per
   * part changed, for the build log, or undefined when the log is busy (the caller tries later).
   */
  redact(redact: (entry: AuditEntry) => AuditEntry): Promise<string[] | undefined>;
}

/** Seed 003's analytics counters of one repository. */
export interface AnalyticsStore {
  /** Add counts; false when they could not be added now (kept by the caller for the next try). Never throws. */
  add(delta: AnalyticsDelta): Promise<boolean>;
  /** The counts; zeros when there are none or they are damaged (they are statistics, not data). */
  read(): Promise<AnalyticsCounts>;
  check(): Promise<PartCheck>;
  /** Start the counts again from zero when they are damaged; never throws. */
  repair(): Promise<void>;
}

/**
 * Everything a repository keeps beside its index that is not the index: the audit log, analytics,
 * the build log, and small named documents (the kept git history, the last bundle, the credential
 * rules' marker). The store provides it — files under `.repodex/` on the embedded store, tables on
 * PostgreSQL — so the engine names no file and a server needs no data folder of its own.
 */
export interface ControlPlane {
  readonly audit: AuditStore;
  readonly analytics: AnalyticsStore;
  /** Append a timestamped line to the build log (bounded: old lines go). Never throws. */
  appendBuildLog(line: string): Promise<void>;
  /** A document's bytes, or undefined when there is none. Throws when it exists but cannot be read. */
  readDocument(name: DocumentName): Promise<Buffer | undefined>;
  /** Replace a document whole (readers see the old or the new one, never part). */
  writeDocument(name: DocumentName, data: string | Buffer): Promise<void>;
  /** Remove a document; true when there was one. */
  removeDocument(name: DocumentName): Promise<boolean>;
  /**
   * Remove the builtin embedder's learned table (made under other credential rules); true when
   * there was one. The table is kept beside the checkout on every store (`.repodex/vectors/`).
   */
  removeEmbedderTable(): Promise<boolean>;
  /** How answers name a document (`.repodex/history.json`, or the row in a database). */
  describe(name: DocumentName): string;
}

/** The documents a repository keeps beside its index. */
export type DocumentName = 'history.json' | 'last_bundle.json' | 'last_bundle.md' | 'secret-rules.json';
