import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../test/helpers.js';
import { FileAnalytics } from '../store/fs/fs-control.js';
import { Analytics } from './analytics.js';

const readAnalytics = (dir: string) => new FileAnalytics(dir).read();
const checkAnalytics = (dir: string) => new FileAnalytics(dir).check();

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('Analytics', () => {
  it('adds its counts to the file, and many counters share one exit listener', async () => {
    const before = process.listenerCount('exit');
    const beforeExit = process.listenerCount('beforeExit');
    const counters = Array.from({ length: 20 }, () => {
      const dir = mkdtempSync(join(tmpdir(), 'repodex-analytics-'));
      dirs.push(dir);
      return { dir, analytics: new Analytics(new FileAnalytics(dir)) };
    });
    for (const { analytics } of counters) {
      analytics.record(true);
      analytics.record(false);
    }
    expect(process.listenerCount('exit') - before).toBeLessThanOrEqual(1);
    expect(process.listenerCount('beforeExit') - beforeExit).toBeLessThanOrEqual(1);
    for (const { dir, analytics } of counters) {
      await analytics.flush();
      expect(await readAnalytics(dir)).toMatchObject({ queries: 2, hits: 1, misses: 1 });
      // A second process's counts add up.
      const other = new Analytics(new FileAnalytics(dir));
      other.record(true);
      await other.flush();
      expect(await readAnalytics(dir)).toMatchObject({ queries: 3, hits: 2, misses: 1 });
      expect((await readAnalytics(dir)).last_query_ts).toMatch(/^\d{4}-\d\d-\d\dT/);
    }
  });

  it('regression: processes flushing at the same moment lose none of each other\'s counts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'repodex-analytics-'));
    dirs.push(dir);
    const script = `
      const { Analytics } = await import(${JSON.stringify(pathToFileURL(join(PROJECT_ROOT, 'src/engine/analytics.ts')).href)});
      const { FileAnalytics } = await import(${JSON.stringify(pathToFileURL(join(PROJECT_ROOT, 'src/store/fs/fs-control.ts')).href)});
      const analytics = new Analytics(new FileAnalytics(${JSON.stringify(dir)}));
      for (let i = 0; i < 40; i++) { analytics.record(i % 2 === 0); await analytics.flush(); }
    `;
    const runs = Array.from({ length: 4 }, () => new Promise<number | null>((resolve) => spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: PROJECT_ROOT, stdio: ['ignore', 'ignore', 'inherit'] }).once('exit', resolve)));
    expect(await Promise.all(runs)).toEqual([0, 0, 0, 0]);
    expect(await readAnalytics(dir)).toMatchObject({ queries: 160, hits: 80, misses: 80 });
    expect(await checkAnalytics(dir)).toEqual({ checked: ['analytics.json'], problems: [] });
  });

  it('never shows counts from a damaged file, says so, and a sync starts them again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'repodex-analytics-'));
    dirs.push(dir);
    const analytics = new Analytics(new FileAnalytics(dir));
    analytics.record(true);
    await analytics.flush();
    const path = join(dir, 'analytics.json');
    writeFileSync(path, readFileSync(path, 'utf8').replace('"queries":1', '"queries":9'));
    expect((await readAnalytics(dir)).queries).toBe(0);
    expect((await checkAnalytics(dir)).problems).toEqual([expect.stringMatching(/^analytics\.json is damaged: checksum mismatch; its query counts are lost, and `repodex sync` starts them again from zero$/)]);
    await new FileAnalytics(dir).repair();
    expect((await checkAnalytics(dir)).problems).toEqual([]);
    // A file from before counts were checksummed is read as it is.
    writeFileSync(path, '{"queries":3,"hits":2,"misses":1,"last_query_ts":null}\n');
    expect(await readAnalytics(dir)).toMatchObject({ queries: 3, hits: 2, misses: 1 });
  });
});
