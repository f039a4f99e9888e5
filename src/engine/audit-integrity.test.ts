import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileAuditLog } from '../store/fs/fs-control.js';
import { type AuditEntry, readAudit } from './audit.js';

const checkAuditLog = (dir: string) => new FileAuditLog(dir).check();

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function entry(n: number): AuditEntry {
  return { time: new Date(Date.UTC(2026, 10, 25, 10, 0, n)).toISOString(), request_id: `r${n}`, frontend: 'cli', op: 'search', args: { q: `query ${n}` }, outcome: 'ok', blocked: false, duration_ms: n + 0.5 };
}

function logWith(count: number): { dir: string; log: FileAuditLog } {
  const dir = mkdtempSync(join(tmpdir(), 'repodex-audit-'));
  dirs.push(dir);
  const log = new FileAuditLog(dir);
  for (let n = 0; n < count; n++) log.append(entry(n));
  return { dir, log };
}

describe('the audit log\'s integrity', () => {
  it('checksums every line; a damaged one is never returned as a call, and verify says what to do', async () => {
    const { dir, log } = logWith(5);
    expect((await readAudit(log, undefined, 100)).entries).toEqual([0, 1, 2, 3, 4].map(entry));
    expect(await checkAuditLog(dir)).toEqual({ checked: ['audit.jsonl'], problems: [] });
    const path = join(dir, 'audit.jsonl');
    const text = readFileSync(path, 'utf8');
    // A changed query in line 3: still valid JSON, still an entry, but not what was recorded.
    writeFileSync(path, text.replace('"query 2"', '"query 9"'));
    const report = await readAudit(log, undefined, 100);
    expect(report.entries.map((e) => e.request_id)).toEqual(['r0', 'r1', 'r3', 'r4']);
    expect(report.warnings).toEqual([expect.stringMatching(/^1 damaged line\(s\) of the audit log left out .*an audit log cannot be rebuilt/)]);
    expect((await checkAuditLog(dir)).problems).toEqual([expect.stringMatching(/^audit\.jsonl: line 3 is damaged; an audit log cannot be rebuilt, .* delete it \(a new log starts with the next call\)$/)]);
  });

  it('reads lines an older version wrote (no checksum) as they are, but not one that only looks like them', async () => {
    const { dir, log } = logWith(1);
    const path = join(dir, 'audit.jsonl');
    appendFileSync(path, `${JSON.stringify(entry(7))}\n`);
    expect((await readAudit(log, undefined, 100)).entries.map((e) => e.request_id)).toEqual(['r0', 'r7']);
    expect((await checkAuditLog(dir)).problems).toEqual([]);
    // A checksummed line whose checksum field lost a byte is damage, not an older line.
    writeFileSync(path, readFileSync(path, 'utf8').replace('"checksum"', '"checksuM"'));
    expect((await checkAuditLog(dir)).problems).toHaveLength(1);
    expect((await readAudit(log, undefined, 100)).entries.map((e) => e.request_id)).toEqual(['r7']);
  });
});
