import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers.js';
import { AUDIT_FILE, FileAnalytics, FileAuditLog } from './fs-control.js';

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
