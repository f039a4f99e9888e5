import { closeSync, fsyncSync, ftruncateSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';
import { crc32 } from '../../core/crc32.js';
import { isErrnoException } from '../../core/errors.js';
import { fsyncDir, writeFileDurable } from '../../core/fs-atomic.js';
import { crashPoint } from '../../core/crash.js';
import { FORMAT_VERSION } from '../../core/version.js';
import { MAGIC, tag } from '../../index/format.js';
import type { ParseCache, ParsedContent } from '../backend.js';

/**
 * The parse cache (`parse-cache.rpdx`): an append-only log of parse results keyed by content, so a
 * file whose content was chunked before (an edit undone, a branch switched back, `sync --force`)
 * is never parsed again.
 *
 *   header (16 bytes): magic "RPDX" | kind "PCAC" | format version u32 | header crc32 u32
 *   records:           length u32 | crc32 u32 (of key and payload) | key (32 bytes) | payload (JSON)
 *
 * A crash mid-append leaves a torn last record: loading stops at the first record whose length
 * or checksum is wrong, and the next write cuts it off. Only the writer-lock holder writes.
 */
const KIND = 'PCAC';
const HEADER_BYTES = 16;
const RECORD_HEAD = 8;
const KEY_BYTES = 32;
/** The cache is rewritten with only what the index uses once it holds this much more. */
const MIN_COMPACT_BYTES = 32 * 1024 * 1024;

function header(): Buffer {
  const out = Buffer.alloc(HEADER_BYTES);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(tag(KIND), 4);
  out.writeUInt32LE(FORMAT_VERSION, 8);
  out.writeUInt32LE(crc32(out.subarray(0, 12)), 12);
  return out;
}

function encodeRecord(key: string, value: ParsedContent): Buffer {
  const payload = Buffer.from(JSON.stringify([value.spans.map((span) => [span.startLine, span.endLine]), value.symbols, value.fallback]), 'utf8');
  const out = Buffer.alloc(RECORD_HEAD + KEY_BYTES + payload.length);
  out.writeUInt32LE(KEY_BYTES + payload.length, 0);
  Buffer.from(key, 'hex').copy(out, RECORD_HEAD);
  payload.copy(out, RECORD_HEAD + KEY_BYTES);
  out.writeUInt32LE(crc32(out.subarray(RECORD_HEAD)), 4);
  return out;
}

function decodePayload(bytes: Uint8Array): ParsedContent {
  const [spans, symbols, fallback] = JSON.parse(Buffer.from(bytes).toString('utf8')) as [[number, number][], ParsedContent['symbols'], ParsedContent['fallback']];
  return { spans: spans.map(([startLine, endLine]) => ({ startLine, endLine })), symbols, fallback };
}

/** What reading the log found: the good records, and where (and why) it stopped early. */
interface Scan {
  readonly records: Map<string, { readonly offset: number; readonly length: number }>;
  /** Bytes up to the end of the last good record. */
  readonly goodEnd: number;
  /** Why reading stopped before the end of the file, or undefined. */
  readonly damage: string | undefined;
  /** True when what stopped it is a last record cut short: what a crash mid-append leaves, not damage. */
  readonly torn: boolean;
}

function scan(bytes: Buffer): Scan {
  const records = new Map<string, { offset: number; length: number }>();
  if (bytes.length < HEADER_BYTES || bytes.readUInt32LE(0) !== MAGIC || bytes.readUInt32LE(4) !== tag(KIND) || crc32(bytes.subarray(0, 12)) !== bytes.readUInt32LE(12)) {
    return { records, goodEnd: 0, damage: bytes.length === 0 ? undefined : 'bad header', torn: false };
  }
  if (bytes.readUInt32LE(8) !== FORMAT_VERSION) return { records, goodEnd: 0, damage: `format version ${bytes.readUInt32LE(8)}`, torn: false };
  let at = HEADER_BYTES;
  while (at < bytes.length) {
    if (at + RECORD_HEAD > bytes.length) return { records, goodEnd: at, damage: `last record cut short at offset ${at}`, torn: true };
    const length = bytes.readUInt32LE(at);
    const end = at + RECORD_HEAD + length;
    if (length < KEY_BYTES) return { records, goodEnd: at, damage: `bad record length at offset ${at}`, torn: false };
    if (end > bytes.length) return { records, goodEnd: at, damage: `last record cut short at offset ${at}`, torn: true };
    if (crc32(bytes.subarray(at + RECORD_HEAD, end)) !== bytes.readUInt32LE(at + 4)) return { records, goodEnd: at, damage: `record at offset ${at} fails its checksum`, torn: false };
    const key = bytes.subarray(at + RECORD_HEAD, at + RECORD_HEAD + KEY_BYTES).toString('hex');
    records.set(key, { offset: at + RECORD_HEAD + KEY_BYTES, length: length - KEY_BYTES });
    at = end;
  }
  return { records, goodEnd: at, damage: undefined, torn: false };
}

function readOrEmpty(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return Buffer.alloc(0);
    throw error;
  }
}

/**
 * Check the parse cache file: the problems found (empty when sound or absent). A last record cut
 * short is what an interrupted sync leaves and the next one drops: a note, not damage.
 */
export function verifyParseCache(path: string): { problems: string[]; notes: string[] } {
  const found = scan(readOrEmpty(path));
  if (!found.damage) return { problems: [], notes: [] };
  const line = `parse-cache.rpdx: ${found.damage} (the next sync drops it and what follows)`;
  return found.torn ? { problems: [], notes: [line] } : { problems: [line], notes: [] };
}

/** The embedded store's parse cache over one log file. */
export class FsParseCache implements ParseCache {
  private bytes: Buffer;
  private readonly index: Map<string, { offset: number; length: number }>;
  private goodEnd: number;
  /** Records put since the last flush, already encoded (compact: a full build puts one per file). */
  private readonly pending = new Map<string, Buffer>();

  constructor(
    private readonly path: string,
    private readonly dir: string,
  ) {
    this.bytes = readOrEmpty(path);
    const found = scan(this.bytes);
    this.index = found.records;
    this.goodEnd = found.goodEnd;
  }

  get(key: string): ParsedContent | undefined {
    const pending = this.pending.get(key);
    const at = this.index.get(key);
    const payload = pending ? pending.subarray(RECORD_HEAD + KEY_BYTES) : at ? this.bytes.subarray(at.offset, at.offset + at.length) : undefined;
    if (!payload) return undefined;
    try {
      return decodePayload(payload);
    } catch {
      return undefined; // checksummed but not decodable (a newer writer's payload): parse again
    }
  }

  put(key: string, value: ParsedContent): void {
    if (!this.index.has(key) && !this.pending.has(key)) this.pending.set(key, encodeRecord(key, value));
  }

  /**
   * Append what was put since the last flush (cutting off a torn or damaged tail first). Past
   * MIN_COMPACT_BYTES, when the log holds three times what the index uses (`live` keys), it is
   * rewritten with just those, atomically.
   */
  async flush(live: () => Promise<ReadonlySet<string>>): Promise<void> {
    const appended = [...this.pending].map(([key, bytes]) => ({ key, bytes }));
    this.pending.clear();
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
    if (appended.length === 0 && this.goodEnd === this.bytes.length) return;
    const fd = openSync(this.path, this.goodEnd === 0 ? 'w' : 'r+');
    const parts: Buffer[] = [this.bytes.subarray(0, this.goodEnd)];
    try {
      let at = this.goodEnd;
      if (at === 0) {
        const head = header();
        writeSync(fd, head, 0, HEADER_BYTES, 0);
        parts.push(head);
        at = HEADER_BYTES;
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
      // A torn tail from an earlier crash is cut off here.
      if (statSync(this.path).size > at) ftruncateSync(fd, at);
      fsyncSync(fd);
      this.goodEnd = at;
    } finally {
      closeSync(fd);
    }
    this.bytes = Buffer.concat(parts);
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
    this.bytes = readOrEmpty(this.path);
    const found = scan(this.bytes);
    this.index.clear();
    for (const [key, at] of found.records) this.index.set(key, at);
    this.goodEnd = found.goodEnd;
  }
}
