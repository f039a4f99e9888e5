import type { Worker } from 'node:worker_threads';
import { type ErrorCode, RepodexError } from '../core/errors.js';
import type { RepoContext } from './context.js';
import { bundledScript } from '../core/bundled.js';
import type { EmbedSummary } from './embed.js';
import type { Answered, AnswerJob, Answerer } from './engine.js';
import type { LimitOverrides } from '../core/limits.js';
import type { RankingProfile } from '../search/ranking.js';
import type { SyncEvent, SyncSummary } from './sync.js';
import { type SyncRunner, inProcessRunner } from './sync-runner.js';
import type { IndexStore, StoreSpec } from '../store/backend.js';

/** How a server's engines answer: what an answer thread's engine must share with them. */
export interface AnswerSettings {
  readonly ranking?: RankingProfile | undefined;
  readonly limits?: LimitOverrides | undefined;
}

/** A job for a worker: a sync, an embedding run with the embedder the config names, or a read to answer (see `Answerer`). */
export type SyncJob = { readonly type: 'sync'; readonly force: boolean } | { readonly type: 'embed' } | { readonly type: 'answer'; readonly job: AnswerJob; readonly settings: AnswerSettings };

/** What a worker is sent: a job of one repository (its root and store), or to abort the job it runs. */
export type WorkerMessage = { readonly type: 'job'; readonly id: number; readonly root: string; readonly store: StoreSpec; readonly job: SyncJob } | { readonly type: 'abort'; readonly id: number };

/** How a job ended. */
export type SyncJobResult =
  | { readonly type: 'done'; readonly summary: SyncSummary }
  | { readonly type: 'embedded'; readonly summary: EmbedSummary }
  | { readonly type: 'answered'; readonly answered: Answered<AnswerJob> }
  | { readonly type: 'failed'; readonly error: { code: ErrorCode; detail: string | undefined } };

/** A worker's answer to a job, or (`event`) how far the job has come. */
export type WorkerReply = { readonly id: number; readonly result: SyncJobResult } | { readonly id: number; readonly event: SyncEvent };

/** What every worker of a pool is started with: how many reads its answer threads have in hand (one Int32, shared; see give-way.ts). */
export interface WorkerData {
  readonly answering: Int32Array;
}

/** A job waiting for, or running on, a thread of a lane. */
interface Ticket {
  readonly message: Extract<WorkerMessage, { type: 'job' }>;
  readonly owner: object;
  readonly onEvent: ((event: SyncEvent) => void) | undefined;
  resolve(result: SyncJobResult): void;
  reject(error: Error): void;
  thread?: Thread;
}

/** One worker thread, running one job at a time. */
interface Thread {
  readonly worker: Worker;
  ticket: Ticket | undefined;
}

let nextJobId = 0;

const ABORTED: SyncJobResult = { type: 'failed', error: { code: 'ABORTED', detail: undefined } };

/**
 * Up to `size` worker threads taking jobs of any repository from one queue, in order: the budget a
 * kind of work (syncs, or embedding runs) has in a whole process, however many repositories it
 * serves. Threads start on first use and are kept (each keeps the stores it opened, so a
 * repository's segments and parse cache stay loaded between its jobs).
 */
class Lane {
  private readonly threads: Thread[] = [];
  private readonly queue: Ticket[] = [];
  /** Threads being started (not in `threads` yet). */
  private starting = 0;
  private readonly startingThreads = new Set<Promise<Thread>>();
  private closed = false;

  constructor(
    private readonly script: string | URL,
    private readonly size: number,
    private readonly answering: Int32Array,
  ) {}

  run(owner: object, root: string, store: StoreSpec, job: SyncJob, signal: AbortSignal | undefined, onEvent?: (event: SyncEvent) => void): Promise<SyncJobResult> {
    if (this.closed) return Promise.reject(new RepodexError('INTERNAL', 'the sync workers were stopped'));
    if (signal?.aborted) return Promise.resolve(ABORTED);
    return new Promise<SyncJobResult>((resolve, reject) => {
      const ticket: Ticket = { message: { type: 'job', id: ++nextJobId, root, store, job }, owner, onEvent, resolve, reject };
      // One listener per job, removed when it ends: a watch loop hands every sync the same signal.
      const abort = (): void => this.abort(ticket);
      signal?.addEventListener('abort', abort, { once: true });
      const done = (): void => signal?.removeEventListener('abort', abort);
      ticket.resolve = (result) => {
        done();
        resolve(result);
      };
      ticket.reject = (error) => {
        done();
        reject(error);
      };
      this.queue.push(ticket);
      void this.pump();
    });
  }

  /** A queued job ends at once, aborted; a running one is told to stop (and answers ABORTED). */
  private abort(ticket: Ticket): void {
    const at = this.queue.indexOf(ticket);
    if (at >= 0) {
      this.queue.splice(at, 1);
      ticket.resolve(ABORTED);
    } else ticket.thread?.worker.postMessage({ type: 'abort', id: ticket.message.id } satisfies WorkerMessage);
  }

  /** Abort every job of `owner`, queued or running. */
  abortAll(owner: object): void {
    for (const ticket of [...this.queue]) if (ticket.owner === owner) this.abort(ticket);
    for (const thread of this.threads) if (thread.ticket?.owner === owner) this.abort(thread.ticket);
  }

  /** Whether `owner` has a job queued or running. */
  busy(owner: object): boolean {
    return this.queue.some((ticket) => ticket.owner === owner) || this.threads.some((thread) => thread.ticket?.owner === owner);
  }

  /** Hand queued jobs to idle threads, starting threads up to the lane's size. */
  private async pump(): Promise<void> {
    while (this.queue.length > 0 && !this.closed) {
      const thread = this.threads.find((candidate) => candidate.ticket === undefined);
      if (!thread) {
        if (this.threads.length + this.starting >= this.size) return;
        this.starting++;
        const started = this.start();
        this.startingThreads.add(started);
        try {
          await started;
        } catch (error) {
          if (this.closed) return;
          throw error;
        } finally {
          this.starting--;
          this.startingThreads.delete(started);
        }
        continue;
      }
      const ticket = this.queue.shift()!;
      ticket.thread = thread;
      thread.ticket = ticket;
      // Idle, a worker must not keep the process alive; while it runs a job, it must.
      thread.worker.ref();
      thread.worker.postMessage(ticket.message);
    }
  }

  private async start(): Promise<Thread> {
    const { Worker: WorkerClass } = await import('node:worker_threads');
    const worker = new WorkerClass(this.script, { workerData: { answering: this.answering } satisfies WorkerData });
    worker.unref();
    // Closed while this thread was starting: it would never be stopped (and would keep the process alive).
    if (this.closed) {
      await worker.terminate();
      throw new RepodexError('INTERNAL', 'the sync workers were stopped');
    }
    const thread: Thread = { worker, ticket: undefined };
    this.threads.push(thread);
    worker.on('message', (reply: WorkerReply) => {
      const ticket = thread.ticket;
      if (!ticket || ticket.message.id !== reply.id) return;
      if ('event' in reply) {
        ticket.onEvent?.(reply.event);
        return;
      }
      thread.ticket = undefined;
      worker.unref();
      ticket.resolve(reply.result);
      void this.pump();
    });
    const fail = (error: Error): void => {
      const at = this.threads.indexOf(thread);
      if (at >= 0) this.threads.splice(at, 1);
      const ticket = thread.ticket;
      thread.ticket = undefined;
      ticket?.reject(new RepodexError('INTERNAL', `sync worker failed: ${error.message}`, { cause: error }));
      if (!this.closed) void this.pump();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`exited with code ${code}`)));
    return thread;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const ticket of this.queue.splice(0)) ticket.resolve(ABORTED);
    // A thread still starting stops itself once it sees the lane closed.
    await Promise.allSettled([...this.startingThreads]);
    const threads = this.threads.splice(0);
    // An idle worker is unref'd: ref it while it stops, or nothing keeps the event loop alive
    // until it has, and a process awaiting this at the top level ends with Node's exit code 13.
    for (const thread of threads) thread.worker.ref();
    await Promise.all(threads.map((thread) => thread.worker.terminate()));
  }
}

/** A job handed to an answer thread, waiting for its answer. */
interface Waiting {
  resolve(result: SyncJobResult): void;
  reject(error: Error): void;
}

/**
 * Answer threads: reads are short and never aborted, so each thread is handed every job at once
 * (the one with the fewest in flight) and works through them on its own event loop. A thread that
 * waited for this thread to hand it the next job would sit idle whenever this thread is busy with
 * clients, which is exactly when there is most to answer.
 */
class AnswerLane {
  /** Each thread, and the jobs handed to it that have not answered yet, by id. */
  private readonly threads: { worker: Worker; inFlight: Map<number, Waiting> }[] = [];
  private starting: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly script: string | URL,
    private readonly size: number,
    private readonly answering: Int32Array,
  ) {}

  async run(root: string, store: StoreSpec, job: SyncJob): Promise<SyncJobResult> {
    if (this.threads.length < this.size) await (this.starting ??= this.start().finally(() => (this.starting = undefined)));
    if (this.closed || this.threads.length === 0) throw new RepodexError('INTERNAL', 'the answer threads were stopped');
    const thread = this.threads.reduce((least, candidate) => (candidate.inFlight.size < least.inFlight.size ? candidate : least));
    const id = ++nextJobId;
    return new Promise<SyncJobResult>((resolve, reject) => {
      thread.inFlight.set(id, { resolve, reject });
      Atomics.add(this.answering, 0, 1);
      // Busy, a worker keeps the process alive; idle, it must not.
      if (thread.inFlight.size === 1) thread.worker.ref();
      thread.worker.postMessage({ type: 'job', id, root, store, job } satisfies WorkerMessage);
    });
  }

  /** Start the missing threads. */
  private async start(): Promise<void> {
    const { Worker: WorkerClass } = await import('node:worker_threads');
    while (this.threads.length < this.size && !this.closed) {
      const worker = new WorkerClass(this.script);
      worker.unref();
      const thread = { worker, inFlight: new Map<number, Waiting>() };
      this.threads.push(thread);
      worker.on('message', (reply: WorkerReply) => {
        if (!('result' in reply)) return;
        const waiting = thread.inFlight.get(reply.id);
        if (!waiting) return;
        thread.inFlight.delete(reply.id);
        Atomics.sub(this.answering, 0, 1);
        if (thread.inFlight.size === 0) worker.unref();
        waiting.resolve(reply.result);
      });
      const fail = (error: Error): void => {
        const at = this.threads.indexOf(thread);
        if (at >= 0) this.threads.splice(at, 1);
        Atomics.sub(this.answering, 0, thread.inFlight.size);
        for (const waiting of thread.inFlight.values()) waiting.reject(new RepodexError('INTERNAL', `answer thread failed: ${error.message}`, { cause: error }));
        thread.inFlight.clear();
      };
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`exited with code ${code}`)));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.starting;
    const threads = this.threads.splice(0);
    for (const thread of threads) thread.worker.ref();
    await Promise.all(threads.map((thread) => thread.worker.terminate()));
  }
}

function unwrap<T extends SyncJobResult['type']>(result: SyncJobResult, type: T): Extract<SyncJobResult, { type: T }> {
  if (result.type === 'failed') throw RepodexError.fromWire(result.error);
  if (result.type !== type) throw new RepodexError('INTERNAL', `the worker answered ${result.type} to a ${type} job`);
  return result as Extract<SyncJobResult, { type: T }>;
}

/**
 * The worker threads of a process: one lane for syncs and one for embedding runs (so a long
 * embedding run never holds up a lexical sync), each with a fixed number of threads shared by
 * every repository the process serves — a server with many repositories has one thread budget,
 * not threads per repository.
 */
export interface WorkerPool {
  /** The runner of one repository: its syncs and embedding runs go to this pool's workers. */
  runner(root: string, spec: StoreSpec, store: IndexStore): SyncRunner;
  /** Where one repository's reads are answered: this pool's answer threads, or undefined when it has none. */
  answerer(root: string, spec: StoreSpec, settings: AnswerSettings): Answerer | undefined;
  /** Stop every worker (jobs still queued end ABORTED). */
  close(): Promise<void>;
}

/**
 * A pool of `syncs` sync threads, `embeds` embedding threads and `answers` answer threads (none
 * by default) from dist/sync-worker.js. Runs syncs in this thread instead, and has no answer
 * threads, when the worker script is not there (running from sources).
 */
export function workerPool(options: { readonly syncs?: number; readonly embeds?: number; readonly answers?: number; readonly script?: string | URL } = {}): WorkerPool {
  const script = options.script ?? bundledScript('sync-worker.js');
  const answering = new Int32Array(new SharedArrayBuffer(4));
  const syncs = script ? new Lane(script, Math.max(1, options.syncs ?? 1), answering) : undefined;
  const embeds = script ? new Lane(script, Math.max(1, options.embeds ?? 1), answering) : undefined;
  const answers = script && (options.answers ?? 0) > 0 ? new AnswerLane(script, options.answers!, answering) : undefined;
  return {
    answerer(root, spec, settings) {
      if (!answers) return undefined;
      return {
        async answer<J extends AnswerJob>(job: J): Promise<Answered<J>> {
          return unwrap(await answers.run(root, spec, { type: 'answer', job, settings }), 'answered').answered as Answered<J>;
        },
      };
    },
    runner(root, spec, store) {
      if (!syncs || !embeds) return inProcessRunner(store);
      const owner = {};
      return {
        async run(_ctx: RepoContext, options, onEvent) {
          return unwrap(await syncs.run(owner, root, spec, { type: 'sync', force: options.force === true }, options.signal, onEvent), 'done').summary;
        },
        // The worker makes its own embedder from the config: an embedder is not something a thread can be handed.
        async embed(_ctx, _embedder, options, onEvent) {
          return unwrap(await embeds.run(owner, root, spec, { type: 'embed' }, options.signal, onEvent), 'embedded').summary;
        },
        // This repository's jobs stop; the pool's threads go on serving the others.
        async close() {
          syncs.abortAll(owner);
          embeds.abortAll(owner);
          // An aborted job answers within moments; a worker that does not is the pool's to stop.
          for (const deadline = Date.now() + 10_000; (syncs.busy(owner) || embeds.busy(owner)) && Date.now() < deadline; ) {
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
        },
      };
    },
    async close() {
      await Promise.all([syncs?.close(), embeds?.close(), answers?.close()]);
    },
  };
}
