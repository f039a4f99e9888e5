import { mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeRepo, tempDir } from '../../test/helpers.js';
import { IGNORES_GENERATED, writeIgnoredChanges } from '../../test/ignored-changes.js';
import { needsInotify } from '../../test/inotify.js';
import type { Engine } from './engine.js';
import { RepoWatcher, WatchLoop } from './watch.js';

/** A cookie timeout no test outlives (vitest.config.ts gives a test two minutes). */
const LONGER_THAN_THE_TEST = 10 * 60_000;

const watchers: RepoWatcher[] = [];
afterEach(async () => {
  for (const watcher of watchers.splice(0)) await watcher.stop();
});

async function watching(): Promise<{ root: string; watcher: RepoWatcher; cookies: () => string[] }> {
  const root = makeRepo({ 'src/a.ts': 'export const a = 1;\n' });
  mkdirSync(join(root, '.repodex'), { recursive: true });
  const watcher = new RepoWatcher(root);
  watchers.push(watcher);
  await watcher.start();
  return { root, watcher, cookies: () => readdirSync(join(root, '.repodex')).filter((name) => name.startsWith('.cookie-')) };
}

describe.skipIf(process.platform !== 'linux')('RepoWatcher.syncToNow (the freshness cookie)', () => {
  it('proves every earlier change arrived, round after round, with one cookie file kept open and removed at stop', needsInotify(async () => {
    const { root, watcher, cookies } = await watching();
    for (let round = 0; round < 20; round++) {
      const before = watcher.pending;
      writeFileSync(join(root, 'src/a.ts'), `export const a = ${round + 2};\n`);
      expect(await watcher.syncToNow()).toBe(true);
      // The write came before the cookie: its event has been counted by the time the cookie is back.
      expect(watcher.pending).toBeGreaterThan(before);
      watcher.settle(watcher.mark());
    }
    // Rounds asked for at once share the cookies in flight.
    expect(await Promise.all(Array.from({ length: 8 }, () => watcher.syncToNow()))).toEqual(Array(8).fill(true));
    expect(cookies()).toHaveLength(1);
    await watcher.stop();
    // The file is closed and removed off the thread: gone once that has run.
    await expect.poll(cookies, { timeout: 10_000 }).toEqual([]);
  }));

  it('answers false, not a hang, once the index folder is gone, and proves again when it is back', needsInotify(async () => {
    const { root, watcher, cookies } = await watching();
    expect(await watcher.syncToNow()).toBe(true);
    rmSync(join(root, '.repodex'), { recursive: true });
    // The open cookie's folder went with it: the round times out, and the next ones cannot make a cookie.
    expect(await watcher.syncToNow(200)).toBe(false);
    // No cookie can be made, so the round answers at once: one that waited for its cookie would
    // wait past the end of this test.
    expect(await watcher.syncToNow(LONGER_THAN_THE_TEST)).toBe(false);
    mkdirSync(join(root, '.repodex'));
    // The new folder is watched once its own event arrives.
    let proved = false;
    for (let attempt = 0; attempt < 20 && !proved; attempt++) proved = await watcher.syncToNow(200);
    expect(proved).toBe(true);
    // The cookies of rounds that timed out are removed off the thread; the one in use stays.
    await expect.poll(cookies, { timeout: 10_000 }).toHaveLength(1);
  }));
});

describe.skipIf(process.platform !== 'linux')('RepoWatcher: what counts as a change', () => {
  it('counts no event under what the index ignores, nor through a symlink, and tells no listener; counts one it keeps', needsInotify(async () => {
    const outside = tempDir();
    const root = makeRepo({ 'src/a.ts': 'export const a = 1;\n', '.gitignore': IGNORES_GENERATED });
    mkdirSync(join(root, '.repodex'), { recursive: true });
    symlinkSync(outside, join(root, 'linked-outside'));
    const watcher = new RepoWatcher(root);
    watchers.push(watcher);
    await watcher.start();
    let told = 0;
    watcher.onChange(() => told++);
    expect(await watcher.syncToNow()).toBe(true);
    const before = watcher.pending;
    writeIgnoredChanges(root, outside);
    // The cookie comes back after every event written before it: all of those have arrived by now.
    expect(await watcher.syncToNow()).toBe(true);
    expect(watcher.pending).toBe(before);
    expect(told).toBe(0);
    writeFileSync(join(root, 'src/a.ts'), 'export const a = 2;\n');
    expect(await watcher.syncToNow()).toBe(true);
    expect(watcher.pending).toBeGreaterThan(before);
    expect(told).toBeGreaterThan(0);
  }));
});

describe.skipIf(process.platform !== 'linux')('RepoWatcher.takeFlood', () => {
  it("says so when a flood in another repository of the process may have overflowed the event queue they share, and not for a few edits", needsInotify(async () => {
    const quiet = await watching();
    const busy = await watching();
    expect(quiet.watcher.takeFlood()).toBe(false);
    // A few edits elsewhere: nothing to fear.
    for (let i = 0; i < 10; i++) writeFileSync(join(busy.root, `src/few-${i}.ts`), `export const f${i} = ${i};\n`);
    expect(await quiet.watcher.syncToNow()).toBe(true);
    expect(await busy.watcher.syncToNow()).toBe(true);
    expect(quiet.watcher.takeFlood()).toBe(false);
    // Thousands of files written in one go (a checkout): their events reach the process in one turn.
    for (let i = 0; i < 4500; i++) writeFileSync(join(busy.root, `src/many-${i}.ts`), `export const m${i} = ${i};\n`);
    expect(await quiet.watcher.syncToNow()).toBe(true);
    expect(quiet.watcher.takeFlood()).toBe(true);
    expect(quiet.watcher.takeFlood()).toBe(false);
  }));
});

/** A watcher that reports `events` relevant changes at once, and an engine that counts its syncs. */
function loopOver(debounceMs: number): { change(events: number): void; syncs: () => number; loop: WatchLoop } {
  let pending = 0;
  let syncs = 0;
  const listeners = new Set<() => void>();
  const watcher = {
    get pending() {
      return pending;
    },
    onChange(listener: () => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  } as unknown as RepoWatcher;
  const engine = {
    async sync() {
      syncs++;
      pending = 0;
      return {};
    },
  } as unknown as Engine;
  const loop = new WatchLoop(engine, watcher, debounceMs);
  return {
    change(events) {
      pending += events;
      for (const listener of listeners) listener();
    },
    syncs: () => syncs,
    loop,
  };
}

describe('WatchLoop: how long it waits', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('re-indexes a save or two after a tenth of the debounce period, a flood after all of it', async () => {
    vi.useFakeTimers();
    const save = loopOver(500);
    save.change(3); // an editor's atomic save: a temporary file written, then renamed
    await vi.advanceTimersByTimeAsync(49);
    expect(save.syncs()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(save.syncs()).toBe(1);
    await save.loop.stop();

    const flood = loopOver(500);
    for (let i = 0; i < 10; i++) flood.change(20); // a branch checkout: 200 files
    await vi.advanceTimersByTimeAsync(499);
    expect(flood.syncs()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(flood.syncs()).toBe(1);
    await flood.loop.stop();
  });

  it('re-indexes a flood that never stops after ten debounce periods', async () => {
    vi.useFakeTimers();
    const flood = loopOver(100);
    for (let t = 0; t < 999 && flood.syncs() === 0; t += 20) {
      flood.change(20);
      await vi.advanceTimersByTimeAsync(20);
    }
    expect(flood.syncs()).toBe(1);
    await flood.loop.stop();
  });
});
