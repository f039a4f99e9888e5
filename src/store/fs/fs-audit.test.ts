import { existsSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers.js';
import { AUDIT_FILE, AUDIT_ROTATED_FILE, FileAnalytics, FileAuditLog } from './fs-control.js';

const entry = (i: number) => ({ time: new Date(Date.UTC(2026, 10, 26, 0, 0, i % 60)).toISOString(), request_id: `r${i}`, frontend: 'jsonl', op: 'search', args: { q: `query number ${i}` }, outcome: 'ok', blocked: false, duration_ms: 1 });

/** Break line `n` (1-based) of the log: one byte inside its query text changed. */
function damageLine(path: string, n: number): void {
  const lines = readFileSync(path, 'utf8').split('\n');
  lines[n - 1] = lines[n - 1]!.replace('query number', 'query numbex');
  writeFileSync(path, lines.join('\n'));
}

describe('the audit log check', () => {
  it('a quick check (status) reads the lines of the last 128 KiB; a deep one (verify) every line', async () => {
    const dir = tempDir();
    const log = new FileAuditLog(dir);
    // About 1.3 MB: ten times what a quick check reads.
    for (let i = 0; i < 10_000; i++) log.append(entry(i));
    const path = join(dir, AUDIT_FILE);
    expect(readFileSync(path).length).toBeGreaterThan(10 * 128 * 1024);
    expect(await log.check(false)).toEqual({ checked: [AUDIT_FILE], problems: [] });

    damageLine(path, 9_990);
    const quick = await log.check(false);
    expect(quick.problems).toEqual([expect.stringMatching(/^audit\.jsonl: line 9990 is damaged; an audit log cannot be rebuilt/)]);
    expect((await log.check(true)).problems).toEqual(quick.problems);

    damageLine(path, 10);
    expect((await log.check(false)).problems).toEqual(quick.problems);
    expect((await log.check(true)).problems).toEqual([expect.stringMatching(/^audit\.jsonl: 2 lines \(10, 9990\) are damaged/)]);
  });
});

describe('the data folder a log line makes', () => {
  it('is made in a repository on its first line, with a .gitignore', () => {
    const root = tempDir();
    new FileAuditLog(join(root, '.repodex')).append(entry(1));
    expect(readFileSync(join(root, '.repodex', AUDIT_FILE), 'utf8')).toContain('query number 1');
    expect(readFileSync(join(root, '.repodex', '.gitignore'), 'utf8')).toBe('*\n');
  });

  it('never makes a deleted repository again: lines and counts written as a server stops are dropped', async () => {
    const root = tempDir();
    const dataDir = join(root, '.repodex');
    const log = new FileAuditLog(dataDir);
    const analytics = new FileAnalytics(dataDir);
    log.append(entry(1));
    rmSync(root, { recursive: true, force: true });
    log.append(entry(2));
    expect(await analytics.add({ queries: 1, hits: 1, misses: 0, last: null })).toBe(true);
    expect(existsSync(root)).toBe(false);
  });

  it('is made with its parents for a server of its own folder', () => {
    const folder = join(tempDir(), 'not', 'yet');
    new FileAuditLog(folder, true).append(entry(3));
    expect(readFileSync(join(folder, AUDIT_FILE), 'utf8')).toContain('query number 3');
  });
});

describe('the audit log file, kept open between batches', () => {
  const linesOf = (path: string): string[] => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []);

  it('writes each batch where its path leads now: after another process rotated, replaced or removed it', () => {
    const dir = tempDir();
    const path = join(dir, AUDIT_FILE);
    const rotated = join(dir, AUDIT_ROTATED_FILE);
    const log = new FileAuditLog(dir);
    log.append(entry(1));
    // Another process rotates the log: the next line starts the new file.
    renameSync(path, rotated);
    log.append(entry(2));
    expect(linesOf(rotated).map((line) => JSON.parse(line).request_id)).toEqual(['r1']);
    expect(linesOf(path).map((line) => JSON.parse(line).request_id)).toEqual(['r2']);
    // Another process rewrites it (a redaction: a new file renamed over the old one).
    writeFileSync(`${path}.tmp`, readFileSync(path));
    renameSync(`${path}.tmp`, path);
    log.append(entry(3));
    expect(linesOf(path).map((line) => JSON.parse(line).request_id)).toEqual(['r2', 'r3']);
    // Removed: made again.
    rmSync(path);
    log.append(entry(4));
    expect(linesOf(path).map((line) => JSON.parse(line).request_id)).toEqual(['r4']);
  });

  // The open-file count is read from Linux's /proc.
  it.skipIf(!existsSync('/proc/self/fd'))('holds a bounded number of files open across many repositories, and loses no line', () => {
    const dirs = Array.from({ length: 150 }, () => tempDir());
    const logs = dirs.map((dir) => new FileAuditLog(dir));
    const before = readdirSync('/proc/self/fd').length;
    for (let round = 0; round < 3; round++) logs.forEach((log, i) => log.append(entry(round * 1000 + i)));
    expect(readdirSync('/proc/self/fd').length - before).toBeLessThanOrEqual(64);
    dirs.forEach((dir, i) => expect(linesOf(join(dir, AUDIT_FILE)).map((line) => JSON.parse(line).request_id)).toEqual([`r${i}`, `r${1000 + i}`, `r${2000 + i}`]));
  });
});
