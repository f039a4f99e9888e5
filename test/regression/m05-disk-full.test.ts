import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, mkdirSync, readdirSync, rmSync, statSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, runCli, tempDir } from '../helpers.js';
import { type OwnPostgres, ownPostgresMissing, startOwnPostgres } from './own-postgres.js';

const STACK = /^\s+at |ENOSPC|Error:/m;

/** Why a small tmpfs cannot be mounted here, or undefined. */
function tmpfsMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'SKIPPED: mounting a small tmpfs (a disk that fills up) needs root';
  const dir = tempDir();
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { encoding: 'utf8' });
  if (mounted.status !== 0) return `SKIPPED: mount -t tmpfs fails here: ${mounted.stderr.trim() || mounted.error?.message}`;
  spawnSync('umount', [dir]);
  return undefined;
}

const noTmpfs = tmpfsMissing();
if (noTmpfs) console.warn(`M5: ${noTmpfs}`);
const noPostgres = noTmpfs ?? ownPostgresMissing();
if (noPostgres && !noTmpfs) console.warn(`M5: ${noPostgres}`);

/** A tmpfs of `megabytes` mounted on a new folder, unmounted after the file's tests. */
const mounts: string[] = [];
function smallDisk(megabytes: number): string {
  const dir = tempDir();
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m`, 'tmpfs', dir]);
  mounts.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of mounts.splice(0)) spawnSync('umount', ['-l', dir]);
});

/** Source files enough to make an index of a few hundred kilobytes: each a module of its own words. */
function sources(count: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const lines = [`export function module${i}Entry(input: string): string {`];
    for (let j = 0; j < 30; j++) lines.push(`  const word${i}x${j} = input.replace('token${(i * 31 + j) % 997}', 'value${(i * 17 + j) % 991}');`);
    lines.push(`  return word${i}x0;`, '}', '');
    files[`src/module${i}.ts`] = lines.join('\n');
  }
  return files;
}

/** Fill the file system holding `dir` with a file of its own until about `leave` bytes are free. */
function fillUntil(dir: string, leave: number): string {
  const filler = join(dir, 'filler');
  const free = (): number => Number(statfsSync(dir).bavail) * Number(statfsSync(dir).bsize);
  const size = Math.max(0, free() - leave);
  writeFileSync(filler, Buffer.alloc(size));
  return filler;
}

describe.skipIf(noTmpfs !== undefined)('M5: a full disk under .repodex/', () => {
  let root: string;
  let segment: number;
  beforeAll(() => {
    const disk = smallDisk(8);
    root = makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', ...sources(120) }, join(disk, 'repo'));
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    segment = statSync(join(root, '.repodex', readdirSync(join(root, '.repodex')).find((name) => /^seg-\d+\.rpdx$/.test(name))!)).size;
    expect(segment).toBeGreaterThan(200_000);
  });

  it('M5: a sync that runs out of room is one line and exit 1, leaves no temp file, and the index as it was', () => {
    const before = readdirSync(join(root, '.repodex')).sort();
    // Less room than the new segment needs: it cannot be written, whatever the timing.
    const filler = fillUntil(root, Math.floor(segment / 3));
    try {
      for (let round = 0; round < 2; round++) {
        const run = runCli(['sync', '--force', '--root', root]);
        expect(run.code, run.stderr).toBe(1);
        expect(run.stderr).not.toMatch(STACK);
        expect(run.stderr).toMatch(
          /^repodex: no space left on the device holding \S+\/\.repodex \(seg-2\.rpdx needs about \d+(\.\d)? (KB|MB); \d+(\.\d)? (KB|MB) free\): the index was left as it was \(free some space there and run the command again\)\n$/,
        );
        expect(readdirSync(join(root, '.repodex')).filter((name) => name.includes('.tmp-'))).toEqual([]);
        expect(readdirSync(join(root, '.repodex')).filter((name) => !before.includes(name))).toEqual([]);
      }
      const verify = runCli(['verify', '--root', root]);
      expect(verify.code, verify.stdout).toBe(0);
      expect(runCli(['search', 'module7Entry', '--root', root]).stdout).toContain('src/module7.ts');
    } finally {
      rmSync(filler);
    }
    // A read of a stale index answers from the one there, saying why it was not refreshed.
    appendFileSync(join(root, 'src', 'module3.ts'), Array.from({ length: 400 }, (_, i) => `export const added${i} = ${i};`).join('\n'));
    const full = fillUntil(root, 0);
    try {
      const stale = runCli(['search', 'module3Entry', '--root', root]);
      expect(stale.code, stale.stderr).toBe(0);
      expect(stale.stdout).toContain('src/module3.ts');
      expect(stale.stdout).not.toMatch(STACK);
      expect(stale.stdout).toMatch(/warning: the index is stale and cannot be refreshed: no space left on the device holding \.repodex\/ \([^)]+\); results may miss these changes: 1 file\(s\) changed/);
    } finally {
      rmSync(full);
    }
    const again = runCli(['sync', '--root', root]);
    expect(again.code, again.stderr).toBe(0);
    expect(runCli(['search', 'added399', '--root', root]).stdout).toContain('src/module3.ts');
  });
});

describe.skipIf(noPostgres !== undefined)('M5: a PostgreSQL server whose disk is full (53100)', () => {
  let pg: OwnPostgres;
  let disk: string;
  let url: string;
  beforeAll(async () => {
    pg = await startOwnPostgres();
    // The tables of one database on a small disk of their own (the server's own files stay where they are).
    disk = smallDisk(24);
    const space = join(disk, 'space');
    mkdirSync(space);
    chownSync(space, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })));
    pg.psql(`CREATE TABLESPACE small LOCATION '${space}'`);
    pg.psql('CREATE DATABASE fills TABLESPACE small');
    pg.psql('CREATE EXTENSION vector', 'fills');
    url = pg.url.replace(/\/postgres$/, '/fills');
  });
  afterAll(() => pg?.stop());

  it('M5: a sync the server has no room for is one line and exit 1; the index in the database is as it was', () => {
    const root = makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', ...sources(40) });
    expect(runCli(['sync', '--root', root, '--store', url]).code).toBe(0);
    const generation = pg.psql(`SELECT generation FROM repos WHERE root = '${root}'`, 'fills');
    for (const [path, text] of Object.entries(sources(400))) {
      mkdirSync(join(root, 'more', path, '..'), { recursive: true });
      writeFileSync(join(root, 'more', path), text);
    }
    const filler = fillUntil(disk, 256 * 1024);
    try {
      const run = runCli(['sync', '--root', root, '--store', url]);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).not.toMatch(/^\s+at /m);
      expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(1);
      expect(run.stderr).toMatch(/^repodex: the database server of postgres:\/\/\S+\/fills has no space left on its disk \(could not .+\): the index was left as it was \(free some space there and run the command again\)\n$/);
      expect(pg.psql(`SELECT generation FROM repos WHERE root = '${root}'`, 'fills')).toBe(generation);
      expect(runCli(['search', 'module7Entry', '--root', root, '--store', url]).stdout).toContain('src/module7.ts');
    } finally {
      rmSync(filler);
    }
    const again = runCli(['sync', '--root', root, '--store', url]);
    expect(again.code, again.stderr).toBe(0);
  });
});
