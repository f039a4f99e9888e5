import { afterEach, describe, expect, it } from 'vitest';
import type { RepoContext } from './context.js';
import type { IndexStore } from '../store/backend.js';
import type { Embedder } from '../vector/embedder.js';
import { type WorkerPool, workerPool } from './worker-runner.js';

const SCRIPT = new URL('../../test/worker-pool-stand-in.mjs', import.meta.url);
const ctx = {} as RepoContext;
const store = {} as IndexStore;
const spec = { kind: 'fs' } as const;
/** What the stand-in worker answers: the root it ran, on which thread, when it started. */
type Echo = { root: string; thread: number; started: number; ended: number; answering: number | null };

const pools: WorkerPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});
function pool(syncs: number): WorkerPool {
  const made = workerPool({ syncs, embeds: 1, script: SCRIPT });
  pools.push(made);
  return made;
}

describe('the worker pool', () => {
  it('runs the syncs of many repositories on at most its budget of threads, each job with its own repository', async () => {
    const shared = pool(2);
    const runners = Array.from({ length: 6 }, (_, i) => shared.runner(`/repo/${i}`, spec, store));
    const results = (await Promise.all(runners.map((runner) => runner.run(ctx, {})))) as unknown as Echo[];
    expect(results.map((result) => result.root)).toEqual(runners.map((_, i) => `/repo/${i}`));
    expect(new Set(results.map((result) => result.thread)).size).toBe(2);
  });

  it('a sync waits for a free thread in order, and an embedding run goes to its own lane meanwhile', async () => {
    const shared = pool(1);
    const [a, b] = [shared.runner('/repo/a', spec, store), shared.runner('/repo/b', spec, store)];
    const long = a.run(ctx, { force: true });
    const queued = b.run(ctx, {});
    const embedded = (await b.embed(ctx, {} as Embedder, {})) as unknown as Echo;
    const [first, second] = (await Promise.all([long, queued])) as unknown as Echo[];
    expect(second!.started).toBeGreaterThanOrEqual(first!.ended);
    // The embedding run did not wait for the long sync.
    expect(embedded.started).toBeLessThan(first!.ended);
  });

  it('aborting a queued job ends it at once without running it; aborting a running one stops it', async () => {
    const shared = pool(1);
    const [a, b] = [shared.runner('/repo/a', spec, store), shared.runner('/repo/b', spec, store)];
    const running = new AbortController();
    const queued = new AbortController();
    const first = a.run(ctx, { force: true, signal: running.signal });
    const second = b.run(ctx, { signal: queued.signal });
    queued.abort();
    await expect(second).rejects.toMatchObject({ code: 'ABORTED' });
    running.abort();
    await expect(first).rejects.toMatchObject({ code: 'ABORTED' });
    // The thread is free again for the next job.
    expect(((await b.run(ctx, {})) as unknown as Echo).root).toBe('/repo/b');
  });

  it("closing one repository's runner stops its jobs and leaves the others running", async () => {
    const shared = pool(1);
    const [a, b] = [shared.runner('/repo/a', spec, store), shared.runner('/repo/b', spec, store)];
    const mine = a.run(ctx, { force: true });
    const theirs = b.run(ctx, {});
    await a.close();
    await expect(mine).rejects.toMatchObject({ code: 'ABORTED' });
    expect(((await theirs) as unknown as Echo).root).toBe('/repo/b');
  });

  it('tells its sync threads how many reads its answer threads have in hand, so a sync can give way to them', async () => {
    const made = workerPool({ syncs: 1, embeds: 1, answers: 1, script: SCRIPT });
    pools.push(made);
    const answerer = made.answerer('/repo/a', spec, {})!;
    const runner = made.runner('/repo/a', spec, store);
    // Two reads in hand (answered after 2 s) while a sync starts; none once they are answered.
    const reads = [answerer.answer({ op: 'outline', path: 'a.ts', waitMs: 2000 } as never), answerer.answer({ op: 'outline', path: 'b.ts', waitMs: 2000 } as never)];
    const during = (await runner.run(ctx, {})) as unknown as Echo;
    await Promise.all(reads);
    const after = (await runner.run(ctx, {})) as unknown as Echo;
    expect([during.answering, after.answering]).toEqual([2, 0]);
  });
});
