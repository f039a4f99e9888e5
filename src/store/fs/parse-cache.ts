import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { checkedFilesOf } from '../../core/checked-files.js';
import { crc32 } from '../../core/crc32.js';
import { RepodexError, errorMessage, isErrnoException } from '../../core/errors.js';
import { fsyncDir, writeFileDurable } from '../../core/fs-atomic.js';
import { rethrowSystemFailure } from '../../core/system-errors.js';
import { crashPoint } from '../../core/crash.js';
import { FEATURE_VERSION, FORMAT_VERSION } from '../../core/version.js';
import { SECRET_RULES_VERSION } from '../../safety/secrets.js';
import { MAGIC, tag } from '../../index/format.js';
import { packParse, unpackParse } from '../../index/parse-record.js';
import type { LocalParseCache, ParseCache, ParsedContent } from '../backend.js';

/**
 * The parse cache (`parse-cache.rpdx`): an append-only log of parse results keyed by content, so a
 * file whose content was chunked before (an edit undone, a branch switched back, `sync --force`)
 * is never parsed again.
 *
 *   header:  magic "RPDX" | kind "PCAC" | format version u32 | cache layout u32 | feature version u32
 *            | rules length u32 | secret rules version (UTF-8) | zero padding to 4 bytes | header crc32 u32
 *   records: length u32 | crc32 u32 (of key and payload) | key (32 bytes) | payload (index/parse-record.ts)
 *
 * The header records the indexing rules the results were made under (the feature version and
 * the credential rules: a cached result means "scanned clean by these rules"); a cache made under
 * other rules is discarded whole, so nothing parsed under older rules lingers on disk. A crash
 * mid-append leaves a torn last record: loading stops at the first record whose length or
 * checksum is wrong, and the next write (or a sync with nothing to write) cuts it off.
 *
 * Only the writer-lock holder writes, and it reads the file again first when another process
 * changed it since this one last saw it, so an append always lands after the last record on disk.
 * Layouts:
 *   1 — magic, kind, format version, header crc (16 bytes).
 *   2 — the indexing rules in the header.
 *   3 — payloads packed by packParse (deflated; signatures and docs apart, as a segment stores
 *       them): a sixth of the size (kafka's 26 MB cache became 4 MB), so a sync that looks up one
 *       file reads and checks that much less.
 */
const KIND = 'PCAC';
const LAYOUT = 3;
const FIXED_HEADER_BYTES = 24;
/** The longest header read: its rules text is at most 4 KiB. */
const MAX_HEADER_BYTES = FIXED_HEADER_BYTES + 4096 + 8;
const RECORD_HEAD = 8;
const KEY_BYTES = 32;
/** The cache is rewritten with only what the index uses once it holds this much more. */
const MIN_COMPACT_BYTES = 32 * 1024 * 1024;
/** The file's name, as reports name it. */
const NAME = 'parse-cache.rpdx';

function header(): Buffer {
  const rules = Buffer.from(SECRET_RULES_VERSION, 'utf8');
  const pad = (4 - (rules.length % 4)) % 4;
  const out = Buffer.alloc(FIXED_HEADER_BYTES + rules.length + pad + 4);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(tag(KIND), 4);
  out.writeUInt32LE(FORMAT_VERSION, 8);
  out.writeUInt32LE(LAYOUT, 12);
  out.writeUInt32LE(FEATURE_VERSION, 16);
  out.writeUInt32LE(rules.length, 20);
  rules.copy(out, FIXED_HEADER_BYTES);
  out.writeUInt32LE(crc32(out.subarray(0, out.length - 4)), out.length - 4);
  return out;
}

/** What a cache file's header says: where records start, or why none of it can be used. */
type Header = { readonly end: number } | { readonly damage: string } | { readonly otherRules: string };

function readHeader(bytes: Buffer): Header {
  if (bytes.length < 16 || bytes.readUInt32LE(0) !== MAGIC || bytes.readUInt32LE(4) !== tag(KIND)) return { damage: 'bad header' };
  // Layout 1 (an older repodex): its own header checksum at 12. It says nothing of its rules.
  if (crc32(bytes.subarray(0, 12)) === bytes.readUInt32LE(12)) return { otherRules: 'written by an older repodex, which did not record its rules' };
  if (bytes.length < FIXED_HEADER_BYTES) return { damage: 'bad header' };
  const rulesLength = bytes.readUInt32LE(20);
  const end = FIXED_HEADER_BYTES + rulesLength + ((4 - (rulesLength % 4)) % 4) + 4;
  if (rulesLength > 4096 || end > bytes.length || crc32(bytes.subarray(0, end - 4)) !== bytes.readUInt32LE(end - 4)) return { damage: 'bad header' };
  const written = `format ${bytes.readUInt32LE(8)}, layout ${bytes.readUInt32LE(12)}, feature version ${bytes.readUInt32LE(16)}, ${bytes.toString('utf8', FIXED_HEADER_BYTES, FIXED_HEADER_BYTES + rulesLength)}`;
  const ours = `format ${FORMAT_VERSION}, layout ${LAYOUT}, feature version ${FEATURE_VERSION}, ${SECRET_RULES_VERSION}`;
  return written === ours ? { end } : { otherRules: `written under other rules (${written}; this repodex: ${ours})` };
}

/** A whole record around a packed payload. */
function encodeRecord(key: string, payload: Uint8Array): Buffer {
  const out = Buffer.alloc(RECORD_HEAD + KEY_BYTES + payload.length);
  out.writeUInt32LE(KEY_BYTES + payload.length, 0);
  Buffer.from(key, 'hex').copy(out, RECORD_HEAD);
  out.set(payload, RECORD_HEAD + KEY_BYTES);
  out.writeUInt32LE(crc32(out.subarray(RECORD_HEAD)), 4);
  return out;
}

/** What reading the log found: the good records, and where (and why) it stopped early. */
interface Scan {
  readonly records: Map<string, { readonly offset: number; readonly length: number }>;
  /** Bytes up to the end of the last good record (0: nothing usable, the file is written anew). */
  readonly goodEnd: number;
  /** Why reading stopped before the end of the file, or undefined. */
  readonly damage: string | undefined;
  /** True when what stopped it is a last record cut short: what a crash mid-append leaves, not damage. */
  readonly torn: boolean;
  /** Why the whole file is set aside without being damage (made under other rules), or undefined. */
  readonly discarded: string | undefined;
}

/** Where a scan reads from: bytes `[offset, offset + length)` of a log `length` bytes long. */
interface Source {
  readonly length: number;
  bytes(offset: number, length: number): Buffer;
}

/** A log held in memory. */
function memorySource(bytes: Buffer): Source {
  return { length: bytes.length, bytes: (offset, length) => bytes.subarray(offset, offset + length) };
}

/** Bytes read through a window of at least a MiB: a check never holds the whole file. */
const WINDOW_BYTES = 1 << 20;

/** A log read from an open file a window at a time (each call's bytes are valid until the next call). */
function fileSource(fd: number, length: number): Source {
  let window = Buffer.allocUnsafe(WINDOW_BYTES);
  let from = 0;
  let to = 0;
  return {
    length,
    bytes(offset, count) {
      if (offset < from || offset + count > to) {
        if (count > window.length) window = Buffer.allocUnsafe(count);
        const want = Math.min(window.length, length - offset);
        let got = 0;
        while (got < want) {
          const n = readSync(fd, window, got, want - got, offset + got);
          if (n === 0) break;
          got += n;
        }
        from = offset;
        to = offset + got;
      }
      return window.subarray(offset - from, offset - from + count);
    },
  };
}

/** Read the log's records (their keys and places only when `collect`: a check needs neither). */
function scan(source: Source, collect = true): Scan {
  const records = new Map<string, { offset: number; length: number }>();
  if (source.length === 0) return { records, goodEnd: 0, damage: undefined, torn: false, discarded: undefined };
  const head = readHeader(source.bytes(0, Math.min(source.length, MAX_HEADER_BYTES)));
  if ('damage' in head) return { records, goodEnd: 0, damage: head.damage, torn: false, discarded: undefined };
  if ('otherRules' in head) return { records, goodEnd: 0, damage: undefined, torn: false, discarded: head.otherRules };
  const stop = (at: number, damage: string, torn: boolean): Scan => ({ records, goodEnd: at, damage, torn, discarded: undefined });
  let at = head.end;
  while (at < source.length) {
    if (at + RECORD_HEAD > source.length) return stop(at, `last record cut short at offset ${at}`, true);
    const recordHead = source.bytes(at, RECORD_HEAD);
    const length = recordHead.readUInt32LE(0);
    const stored = recordHead.readUInt32LE(4);
    const end = at + RECORD_HEAD + length;
    if (length < KEY_BYTES) return stop(at, `bad record length at offset ${at}`, false);
    if (end > source.length) return stop(at, `last record cut short at offset ${at}`, true);
    const body = source.bytes(at + RECORD_HEAD, length);
    if (crc32(body) !== stored) return stop(at, `record at offset ${at} fails its checksum`, false);
    if (collect) records.set(body.subarray(0, KEY_BYTES).toString('hex'), { offset: at + RECORD_HEAD + KEY_BYTES, length: length - KEY_BYTES });
    at = end;
  }
  return { records, goodEnd: at, damage: undefined, torn: false, discarded: undefined };
}

function readOrEmpty(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return Buffer.alloc(0);
    throw new RepodexError('INDEX_CORRUPT', `cannot read ${NAME}: ${errorMessage(error)}; remove it (a sync makes a new one)`, { selfContained: true });
  }
}

/**
 * Check the parse cache file: the problems found (empty when sound or absent). A last record cut
 * short is what an interrupted sync leaves, and a cache made under other rules is simply set
 * aside: notes, not damage. The next sync repairs all of them (FsParseCache.repair).
 */
export function verifyParseCache(path: string): { problems: string[]; notes: string[] } {
  let found: Scan | undefined;
  try {
    found = scanFile(path);
  } catch (error) {
    // Not a file one can read (a folder in its place, no permission): damage to report, not a crash.
    return { problems: [`cannot read ${NAME}: ${errorMessage(error)}; remove it (a sync makes a new one)`], notes: [] };
  }
  if (!found) return { problems: [], notes: [] };
  if (found.discarded) return { problems: [], notes: [`${NAME} was ${found.discarded}: the next sync discards it`] };
  if (!found.damage) return { problems: [], notes: [] };
  if (found.torn) return { problems: [], notes: [`${NAME}: ${found.damage} (what an interrupted sync leaves); the next sync drops it`] };
  return { problems: [`${NAME} is damaged: ${found.damage}; \`repodex sync\` drops it and what follows (those files are parsed again when they next change)`], notes: [] };
}

/** Scan the file at `path` through a window (nothing kept), or undefined when there is none. */
function scanFile(path: string, mode: 'r' | 'r+' = 'r', then?: (fd: number, found: Scan) => void): Scan | undefined {
  let fd: number;
  try {
    fd = openSync(path, mode);
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return undefined;
    throw error;
  }
  try {
    const found = scan(fileSource(fd, fstatSync(fd).size), false);
    then?.(fd, found);
    return found;
  } finally {
    closeSync(fd);
  }
}

/**
 * Drop what cannot be used from the cache file, without loading it: a damaged or torn tail is cut
 * off, a file with a damaged header or made under other rules is removed. What a sync with nothing
 * to index does (the caller holds the writer lock); cheap when the file is sound (one checked
 * read). Another process's in-memory copy notices at its next flush (the file changed).
 */
export function repairParseCache(path: string): void {
  const found = scanFile(path, 'r+', (fd, scanned) => {
    if (scanned.goodEnd > 0 && scanned.damage !== undefined) {
      ftruncateSync(fd, scanned.goodEnd);
      fsyncSync(fd);
    }
  });
  if (found && found.goodEnd === 0 && (found.damage !== undefined || found.discarded !== undefined)) rmSync(path, { force: true });
}

/** The identity of a file's current version (inode, size, mtime), or '' when it is missing. */
function fileStamp(path: string): string {
  const stat = statSync(path, { throwIfNoEntry: false, bigint: true });
  return stat ? `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}` : '';
}

/** The embedded store's parse cache over one log file. */
export class FsParseCache implements ParseCache {
  private bytes: Buffer = Buffer.alloc(0);
  private readonly index = new Map<string, { offset: number; length: number }>();
  private goodEnd = 0;
  /** The file as this process last read or wrote it: another process's write changes it. */
  private seen = '';
  /** Records put since the last flush, already encoded (compact: a full build puts one per file). */
  private readonly pending = new Map<string, Buffer>();

  constructor(
    private readonly path: string,
    private readonly dir: string,
  ) {
    this.reload();
  }

  /** Read the file as it is now (what other processes appended or rewrote included). */
  private reload(): void {
    this.seen = fileStamp(this.path);
    this.bytes = readOrEmpty(this.path);
    const found = scan(memorySource(this.bytes));
    this.index.clear();
    for (const [key, at] of found.records) this.index.set(key, at);
    this.goodEnd = found.goodEnd;
  }

  get(key: string): ParsedContent | undefined {
    const pending = this.pending.get(key);
    const at = this.index.get(key);
    const payload = pending ? pending.subarray(RECORD_HEAD + KEY_BYTES) : at ? this.bytes.subarray(at.offset, at.offset + at.length) : undefined;
    if (!payload) return undefined;
    try {
      return unpackParse(payload);
    } catch {
      return undefined; // checksummed but not decodable (a newer writer's payload): parse again
    }
  }

  /** Keep `value` (packed here unless its parse packed it already). */
  put(key: string, value: ParsedContent): void {
    if (this.index.has(key) || this.pending.has(key)) return;
    this.pending.set(key, encodeRecord(key, (value.packed ?? packParse(value)).payload));
  }

  /**
   * Append what was put since the last flush (cutting off a torn or damaged tail first). Past
   * MIN_COMPACT_BYTES, when the log holds three times what the index uses (`live` keys), it is
   * rewritten with just those, atomically. The caller holds the writer lock.
   */
  async flush(live: () => Promise<ReadonlySet<string>>): Promise<void> {
    // Another process (a watcher, a server, a CLI sync) may have appended or rewritten the file
    // since this one read it: append after what is on disk now, never at a stale offset.
    if (fileStamp(this.path) !== this.seen) this.reload();
    const appended = this.takePending();
    const total = this.goodEnd + appended.reduce((sum, record) => sum + record.bytes.length, 0);
    if (total > MIN_COMPACT_BYTES) {
      const keys = await live();
      let liveBytes = 0;
      for (const [key, at] of this.index) if (keys.has(key)) liveBytes += RECORD_HEAD + KEY_BYTES + at.length;
      for (const record of appended) if (keys.has(record.key)) liveBytes += record.bytes.length;
      if (total > 3 * liveBytes) {
        this.rewrite(keys, appended);
        return;
      }
    }
    this.append(appended);
  }

  /** The pending records not already on disk (another process may have cached the same content). */
  private takePending(): { key: string; bytes: Buffer }[] {
    const out = [...this.pending].filter(([key]) => !this.index.has(key)).map(([key, bytes]) => ({ key, bytes }));
    this.pending.clear();
    return out;
  }

  private append(appended: readonly { key: string; bytes: Buffer }[]): void {
    if (appended.length === 0 && this.goodEnd === this.bytes.length) return;
    if (appended.length === 0 && this.goodEnd === 0) {
      // Nothing usable and nothing to add: no cache at all until there is something to keep.
      rmSync(this.path, { force: true });
      this.reload();
      return;
    }
    const fd = openSync(this.path, this.goodEnd === 0 ? 'w' : 'r+');
    const parts: Buffer[] = [this.bytes.subarray(0, this.goodEnd)];
    try {
      let at = this.goodEnd;
      if (at === 0) {
        const head = header();
        writeSync(fd, head, 0, head.length, 0);
        parts.push(head);
        at = head.length;
      }
      for (const record of appended) {
        if (process.env.REPODEX_CRASH_AT === 'cache-appended') {
          // Tests: die with half a record written, as a crash mid-append leaves it.
          writeSync(fd, record.bytes, 0, record.bytes.length >> 1, at);
          crashPoint('cache-appended');
        }
        writeSync(fd, record.bytes, 0, record.bytes.length, at);
        this.index.set(record.key, { offset: at + RECORD_HEAD + KEY_BYTES, length: record.bytes.length - RECORD_HEAD - KEY_BYTES });
        parts.push(record.bytes);
        at += record.bytes.length;
      }
      // A torn or damaged tail is cut off here.
      if (statSync(this.path).size > at) ftruncateSync(fd, at);
      fsyncSync(fd);
      this.goodEnd = at;
    } catch (error) {
      // A full disk mid-append: what this append wrote goes again (the cache is as it was), and the
      // records it wrote are forgotten with it.
      try {
        ftruncateSync(fd, this.goodEnd);
      } catch {
        // left torn: the next load stops at the torn record, as after a crash
      }
      closeSync(fd);
      this.reload();
      rethrowSystemFailure(error, { path: this.path, writing: true });
    }
    closeSync(fd);
    this.bytes = Buffer.concat(parts);
    this.seen = fileStamp(this.path);
  }

  private rewrite(live: ReadonlySet<string>, appended: readonly { key: string; bytes: Buffer }[]): void {
    const parts: Buffer[] = [header()];
    for (const [key, at] of this.index) {
      if (!live.has(key)) continue;
      parts.push(this.bytes.subarray(at.offset - RECORD_HEAD - KEY_BYTES, at.offset + at.length));
    }
    for (const record of appended) if (live.has(record.key)) parts.push(record.bytes);
    const temp = `${this.path}.tmp-${process.pid}`;
    writeFileDurable(temp, Buffer.concat(parts));
    renameSync(temp, this.path);
    fsyncDir(this.dir);
    this.reload();
  }
}

/**
 * The parse cache of one machine's copy of a repository (`.repodex/parse-cache.rpdx`), whatever
 * store holds its index: a store in a database keeps no parse results (they are this machine's
 * cache of its own work), so the composition root hands it this.
 */
export function localParseCache(dataDir: string): LocalParseCache {
  const path = join(dataDir, NAME);
  let cache: FsParseCache | undefined;
  return {
    async open() {
      mkdirSync(dataDir, { recursive: true });
      cache ??= new FsParseCache(path, dataDir);
      return cache;
    },
    async check() {
      if (!existsSync(path)) return { problems: [], checked: [], notes: [] };
      // Found sound by an earlier process, as the version it still is: not read again (CheckedFiles).
      const report = checkedFilesOf(dataDir).check(NAME, () => verifyParseCache(path), (found) => found.problems.length === 0 && found.notes.length === 0);
      return { problems: [], notes: [], ...report, checked: [NAME] };
    },
    async tidy() {
      repairParseCache(path);
    },
    async clean() {
      cache = undefined;
      if (!existsSync(path)) return [];
      rmSync(path, { force: true });
      return [NAME];
    },
    size() {
      return statSync(path, { throwIfNoEntry: false })?.size ?? 0;
    },
  };
}
