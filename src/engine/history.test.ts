import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo } from '../../test/helpers.js';
import { createEngine } from '../compose.js';
import { DEFAULT_RANKING } from '../search/ranking.js';
import { FsControlPlane } from '../store/fs/fs-control.js';
import { checkHistory } from './history.js';

const git = (root: string, ...args: string[]): void => {
  execFileSync('git', ['-C', root, '-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { stdio: 'ignore' });
};

describe('history field', () => {
  it("a file whose past commit subjects hold the query's words ranks above an equal file, and why says history", async () => {
    const root = makeRepo({ 'src/net.ts': 'export function send(x: string) { return x; }\n', 'src/mail.ts': 'export function send(y: string) { return y; }\n' });
    git(root, 'init', '-q');
    git(root, 'add', 'src');
    git(root, 'commit', '-qm', 'Initial layout');
    appendFileSync(join(root, 'src/net.ts'), '// resumable\n');
    git(root, 'commit', '-qam', 'Resume interrupted uploads');
    const report = await createEngine({ root }).search({ q: 'send uploads' });
    expect(report.results[0]!.path).toBe('src/net.ts');
    expect(report.results[0]!.why).toContain('history:uploads');
    expect(report.results[1]!.why).not.toContain('history:uploads');
    const off = await createEngine({ root, ranking: { ...DEFAULT_RANKING, history: 0 } }).search({ q: 'send uploads' });
    expect(off.results.every((hit) => !hit.why.some((entry) => entry.startsWith('history:')))).toBe(true);
  });

  it('a commit of content already indexed reaches the history field on the next sync, which reads only that file', async () => {
    const root = makeRepo({ 'src/a.ts': 'export const a = 1;\n', 'src/b.ts': 'export const b = 2;\n' });
    git(root, 'init', '-q');
    git(root, 'add', 'src');
    git(root, 'commit', '-qm', 'Start');
    const engine = createEngine({ root });
    await engine.sync();
    const kept = join(root, '.repodex/history.json');
    const keptStat = statSync(kept, { bigint: true });
    writeFileSync(join(root, 'src/b.ts'), 'export const b = 2;\n// slower\n');
    await engine.sync();
    expect((await engine.search({ q: 'throttling' })).results).toEqual([]);
    // No new commit: the kept history is the same, and a sync does not write it again.
    const sameStat = statSync(kept, { bigint: true });
    expect([sameStat.ino, sameStat.mtimeNs]).toEqual([keptStat.ino, keptStat.mtimeNs]);
    git(root, 'commit', '-qam', 'Throttling for b');
    const after = await engine.sync();
    expect(after.files_scanned).toBe(1);
    const report = await engine.search({ q: 'slower throttling' });
    expect(report.results[0]!.path).toBe('src/b.ts');
    expect(report.results[0]!.why).toContain('history:throttling');
  });

  it('history.enabled false keeps git out of the index', async () => {
    const root = makeRepo({ 'src/a.ts': 'export const a = 1;\n', '.repodex/config.json': JSON.stringify({ history: { enabled: false } }) });
    git(root, 'init', '-q');
    git(root, 'add', 'src');
    git(root, 'commit', '-qm', 'Throttling added');
    const engine = createEngine({ root });
    await engine.sync();
    expect(existsSync(join(root, '.repodex/history.json'))).toBe(false);
    expect((await engine.search({ q: 'throttling' })).results).toEqual([]);
    // One kept from when history was on goes with the next sync (its subjects are no longer wanted, and no longer checked).
    writeFileSync(join(root, '.repodex/history.json'), '{"version":2}');
    await engine.sync();
    expect(existsSync(join(root, '.repodex/history.json'))).toBe(false);
  });

  it('a damaged history.json is never used: the files whose subjects it held are indexed again from git\'s, and it is rewritten', async () => {
    const root = makeRepo({ 'src/a.ts': 'export const a = 1;\n' });
    git(root, 'init', '-q');
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'Throttling added');
    const engine = createEngine({ root });
    await engine.sync();
    const path = join(root, '.repodex/history.json');
    writeFileSync(path, readFileSync(path, 'utf8').replace('Throttling', 'Thrott1ing'));
    expect((await checkHistory(new FsControlPlane(join(root, '.repodex')))).problems).toEqual([expect.stringMatching(/^history\.json is damaged: checksum mismatch; `repodex sync` reads the history from git again$/)]);
    const repaired = await engine.sync();
    expect(repaired.files_scanned).toBe(1); // src/a.ts, whose history field the damaged copy could have changed
    expect((await checkHistory(new FsControlPlane(join(root, '.repodex')))).problems).toEqual([]);
    expect((await engine.search({ q: 'export throttling' })).results[0]?.why).toContain('history:throttling');
  });

  it('a damaged history.json whose commits touch no indexed file is replaced by a sync that has nothing to index', async () => {
    const root = makeRepo({ 'src/a.ts': 'export const a = 1;\n', 'notes.bin': 'x' });
    git(root, 'init', '-q');
    git(root, 'add', 'notes.bin');
    git(root, 'commit', '-qm', 'Throttling notes');
    const engine = createEngine({ root });
    await engine.sync();
    const path = join(root, '.repodex/history.json');
    writeFileSync(path, readFileSync(path, 'utf8').replace('Throttling', 'Thrott1ing'));
    expect((await checkHistory(new FsControlPlane(join(root, '.repodex')))).problems).toHaveLength(1);
    expect((await engine.sync()).mode).toBe('none');
    expect((await checkHistory(new FsControlPlane(join(root, '.repodex')))).problems).toEqual([]);
  });
});
