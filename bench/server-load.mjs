#!/usr/bin/env node
// The team server under load: many real repositories registered in one `repodex serve --http`
// process, on the embedded store, on PostgreSQL and on Citus, each store in turn. For each store:
// private clones of every corpus (lexical index only: embeddings off, as bench/stores.mjs does),
// a fresh server, every repository registered (POST /repos) and indexed (POST /index/run, timed),
// then a timed phase: N concurrent HTTP clients (keep-alive sockets from this process, no think
// time) send a mixed workload — searches, fetches of chunk ids from earlier answers, outlines of
// catalogued files — over random repositories, while two repositories re-index from scratch
// again and again (POST /hooks/push with force: a full rebuild and a new generation each time).
// Reports throughput, client-side p50/p99/max per endpoint (and the server's own durations from
// its request log), every failed request, the server's RSS, and where the CPU went (server,
// database, this load generator). Bounded: exactly --seconds of load and at most --max-requests.
// Usage: node bench/server-load.mjs CORPUS… [--corpora FILE] [--pg URL] [--citus URL] [--stores fs,postgres,citus]
//        [--clients 16] [--seconds 60] [--quiet-seconds 0] [--warmup-seconds 10] [--max-requests 200000] [--reindex NAME,NAME] [--sync-threads 2] [--answer-threads N] [--seed 7] [--json out.json] [--trace DIR] [--keep] [--profile DIR]
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { newestMtime } from './baseline.mjs';
import { benchEnv, corpusSelection, createRng, describeMachine, formatBytes, formatMs, git, listCorpusFiles, machineInfo, renderTable, sampleQueries, summarize, tail, withClient } from './lib.mjs';

const USAGE = `usage: node bench/server-load.mjs CORPUS… [--corpora FILE] [--pg URL] [--citus URL] [--stores fs,postgres,citus]
       [--clients 16] [--seconds 60] [--quiet-seconds 0] [--warmup-seconds 10] [--max-requests 200000] [--reindex NAME,NAME] [--sync-threads 2] [--answer-threads N] [--seed 7] [--json out.json] [--trace DIR] [--keep] [--profile DIR]
--trace DIR: every request of the timed phases, one JSON line each (ms since the phase began,
  endpoint, repository, client ms, status), and every re-index run's start and end, in a file per
  store and phase; beside it the server's own log of the same phase (ms since the phase began,
  epoch ms, path, status, server ms): to see which requests are slow, when, and whether the time
  went inside the server.
--profile DIR: the server writes CPU profiles of its threads there (a folder per store), for a profiler.
--quiet-seconds N: first the same load for N seconds with nothing re-indexing, to compare with.
--warmup-seconds N: before any timed phase, the same load for N seconds, not counted: a freshly
  started server compiles its hot code in the background for its first few seconds of load.
CORPUS: git checkouts (or --corpora FILE, one path a line); each store gets private clones of them.
--pg / --citus name databases that hold nothing else: their repodex tables are emptied first.`;
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(REPO, 'bin', 'repodex.js');
const log = (message) => process.stderr.write(`[server-load] ${new Date().toISOString().slice(11, 19)} ${message}\n`);

/** Targets of the team server (issue: load benchmark): search p99 at 16 clients, and no failed request while repositories re-index. */
const TARGETS = { searchP99: { fs: 50, postgres: 100, citus: 100 }, errors: 0 };
/** The mix of the timed phase: the rest are outlines. */
const MIX = { search: 0.7, fetch: 0.15 };
const ENDPOINTS = ['search', 'fetch', 'outline'];
const PATHS = { search: '/search', fetch: '/fetch', outline: '/outline' };
/** Languages `outline` answers for (src/lang adapters); other catalogued files get "no outline". */
const OUTLINE_LANGUAGES = new Set(['typescript', 'tsx', 'javascript', 'python', 'go', 'rust', 'java', 'c', 'cpp', 'csharp', 'ruby', 'php']);
/** Tables a repodex database holds (src/store/pg/migrations); emptied before a store's run, repodex_migrations kept. */
const TABLES = ['repos', 'chunks', 'files', 'segments', 'segment_postings', 'embeddings', 'repo_locks', 'audit_log', 'repo_analytics', 'build_log', 'repo_documents'];
const ERROR_BODIES_KEPT = 5;
/** Sampling interval of the load generator's event-loop delay histogram. */
const LOOP_RESOLUTION_MS = 10;
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

// ---------------------------------------------------------------------------------------------
// Command line

function parseCommandLine() {
  const { values, positionals } = parseArgs({
    options: {
      corpora: { type: 'string' },
      pg: { type: 'string' },
      citus: { type: 'string' },
      stores: { type: 'string' },
      clients: { type: 'string' },
      seconds: { type: 'string' },
      'max-requests': { type: 'string' },
      'quiet-seconds': { type: 'string' },
      'warmup-seconds': { type: 'string' },
      reindex: { type: 'string' },
      'sync-threads': { type: 'string' },
      'answer-threads': { type: 'string' },
      seed: { type: 'string' },
      json: { type: 'string' },
      keep: { type: 'boolean' },
      profile: { type: 'string' },
      trace: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
  });
  if (values.help) return { exit: 0 };
  const corpora = [...positionals];
  if (values.corpora) {
    for (const line of readFileSync(values.corpora, 'utf8').split('\n')) {
      const path = line.replace(/#.*/, '').trim();
      if (path !== '') corpora.push(path);
    }
  }
  const stores = (values.stores ?? ['fs', values.pg ? 'postgres' : null, values.citus ? 'citus' : null].filter(Boolean).join(',')).split(',').map((s) => s.trim());
  const problems = [];
  if (corpora.length === 0) problems.push('no corpus given');
  for (const store of stores) {
    if (!['fs', 'postgres', 'citus'].includes(store)) problems.push(`unknown store ${store} (fs, postgres, citus)`);
    if (store === 'postgres' && !values.pg) problems.push('--stores postgres needs --pg URL');
    if (store === 'citus' && !values.citus) problems.push('--stores citus needs --citus URL');
  }
  const whole = (name, fallback, min) => {
    const value = Number(values[name] ?? fallback);
    if (!Number.isInteger(value) || value < min) problems.push(`--${name} must be a whole number ≥ ${min}`);
    return value;
  };
  const options = {
    corpora: corpora.map((path) => resolve(path)),
    stores,
    urls: { fs: null, postgres: values.pg ?? null, citus: values.citus ?? null },
    clients: whole('clients', 16, 1),
    seconds: whole('seconds', 60, 1),
    quietSeconds: whole('quiet-seconds', 0, 0),
    warmupSeconds: whole('warmup-seconds', 10, 0),
    maxRequests: whole('max-requests', 200_000, 1),
    syncThreads: whole('sync-threads', 2, 1),
    answerThreads: values['answer-threads'] === undefined ? null : whole('answer-threads', 1, 0),
    seed: whole('seed', 7, 0),
    reindex: values.reindex ? values.reindex.split(',').map((s) => s.trim()).filter(Boolean) : null,
    json: values.json ?? null,
    keep: values.keep === true,
    profile: values.profile ? resolve(values.profile) : null,
    trace: values.trace ? resolve(values.trace) : null,
  };
  for (const corpus of options.corpora) if (!existsSync(join(corpus, '.git'))) problems.push(`${corpus} is not a git checkout`);
  const names = options.corpora.map((corpus) => basename(corpus));
  if (new Set(names).size !== names.length) problems.push('two corpora have the same folder name');
  for (const name of options.reindex ?? []) if (!names.includes(name)) problems.push(`--reindex ${name}: no such corpus (${names.join(', ')})`);
  if (problems.length > 0) {
    process.stderr.write(`${problems.join('\n')}\n${USAGE}\n`);
    return { exit: 1 };
  }
  // Default: the first two corpora given re-index.
  options.reindex ??= names.slice(0, Math.min(2, names.length));
  return { options };
}

// ---------------------------------------------------------------------------------------------
// Processes and /proc

/** One line of /proc/PID/stat as numbers from field 3 on (state excluded), or null when the process is gone. */
function procStat(pid) {
  let text;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null; // gone, or not Linux
  }
  // comm may hold spaces and parentheses: the fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(fields[1]), utime: Number(fields[11]), stime: Number(fields[12]), cutime: Number(fields[13]), cstime: Number(fields[14]) };
}

/** CPU seconds a process has used (all its threads). */
function processCpu(pid) {
  const stat = procStat(pid);
  return stat ? (stat.utime + stat.stime) / CLK_TCK : null;
}

/** CPU seconds of a process's main thread alone (its task whose id is the pid): the thread talking to clients (and answering them all without answer threads). */
function mainThreadCpu(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return null; // gone, or not Linux
  }
}

/** CPU seconds of a PostgreSQL server: its postmaster (with the children it reaped) and every live child (backends, workers). */
function postgresCpu(postmasterPid) {
  const root = procStat(postmasterPid);
  if (!root) return null;
  let ticks = root.utime + root.stime + root.cutime + root.cstime;
  for (const entry of readdirSafe('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(entry);
    if (stat && stat.ppid === postmasterPid) ticks += stat.utime + stat.stime;
  }
  return ticks / CLK_TCK;
}

function readdirSafe(path) {
  try {
    return readdirSync(path);
  } catch {
    return []; // not Linux
  }
}

/** Busy and total CPU seconds of the whole machine (all cores), from /proc/stat. */
function machineCpu() {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
    const idle = fields[3] + fields[4];
    return { busy: (total - idle) / CLK_TCK, total: total / CLK_TCK };
  } catch {
    return null;
  }
}

/** VmRSS and VmHWM of a live process, in bytes. */
function memory(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const read = (name) => {
      const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
      return match ? Number(match[1]) * 1024 : null;
    };
    return { rss: read('VmRSS'), hwm: read('VmHWM') };
  } catch {
    return { rss: null, hwm: null };
  }
}

/** Run a command to completion without blocking the event loop (the load generator keeps running meanwhile). */
function runAsync(command, args, options = {}) {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? benchEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => err.push(chunk));
    child.on('error', (error) => resolvePromise({ code: null, stdout: '', stderr: String(error) }));
    child.on('close', (code) => resolvePromise({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
  });
}

// ---------------------------------------------------------------------------------------------
// The databases


/** Every repodex row removed (the registry too), so a store's run starts from an empty database. */
function emptyDatabase(url) {
  return withClient(url, async (client) => {
    const present = [];
    for (const table of TABLES) if ((await client.query('SELECT to_regclass($1) IS NOT NULL AS ok', [table])).rows[0].ok) present.push(table);
    if (present.length > 0) await client.query(`TRUNCATE ${present.join(', ')}`);
  });
}

/** The postmaster PIDs of a database server and, on Citus, of its workers (read from each node's postmaster.pid). */
function databasePids(url, citus) {
  return withClient(url, async (client) => {
    const urls = [url];
    if (citus) {
      for (const row of (await client.query("SELECT nodename, nodeport FROM pg_dist_node WHERE noderole = 'primary' AND groupid <> 0")).rows) {
        const node = new URL(url);
        node.hostname = row.nodename;
        node.port = String(row.nodeport);
        urls.push(node.toString());
      }
    }
    const pids = [];
    for (const nodeUrl of urls) {
      const dataDir = await withClient(nodeUrl, async (node) => (await node.query('SHOW data_directory')).rows[0].data_directory);
      try {
        pids.push(Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]));
      } catch {
        // Another user's server, or another machine: no CPU figure for it.
      }
    }
    return pids;
  });
}

/** Register a root in the `repos` table directly (what PgRegistry.add does, without the RETURNING Citus refuses); returns its id. */
function registerBySql(url, root, name) {
  return withClient(url, async (client) => {
    await client.query('INSERT INTO repos (root) VALUES ($1) ON CONFLICT (root) DO NOTHING', [root]);
    const { rows } = await client.query('UPDATE repos SET registered_at = now(), name = $2 WHERE root = $1 RETURNING id', [root, name]);
    return rows[0].id;
  });
}

/** How many of repodex's tables Citus distributes (0: `repodex db distribute` was not run). */
function distributedTables(url) {
  return withClient(url, async (client) => Number((await client.query('SELECT count(*)::int AS n FROM pg_dist_partition')).rows[0].n));
}

/** Bytes of repodex's tables and indexes (all nodes on Citus), as they are (no vacuum). */
function databaseBytes(url, citus) {
  const size = citus ? 'citus_total_relation_size' : 'pg_total_relation_size';
  return withClient(url, async (client) => Number((await client.query(`SELECT sum(${size}(t::regclass))::bigint AS bytes FROM unnest($1::text[]) AS t WHERE to_regclass(t) IS NOT NULL`, [TABLES])).rows[0].bytes));
}

// ---------------------------------------------------------------------------------------------
// The server and its API

/** A private clone of a corpus with the lexical index only (embeddings off). */
async function cloneCorpus(corpus, into) {
  const clone = await runAsync('git', ['clone', '--quiet', '--no-hardlinks', corpus, into]);
  if (clone.code !== 0) throw new Error(`git clone ${corpus} failed: ${tail(clone.stderr)}`);
  const init = await runAsync(process.execPath, [BIN, 'init', '--root', into]);
  if (init.code !== 0) throw new Error(`repodex init in ${into} failed: ${tail(init.stderr)}`);
  const config = join(into, '.repodex', 'config.json');
  const parsed = JSON.parse(readFileSync(config, 'utf8'));
  writeFileSync(config, `${JSON.stringify({ ...parsed, embeddings: { ...(parsed.embeddings ?? {}), provider: 'off' } }, null, 2)}\n`);
}

/** A running `repodex serve --http`: its URL, its request log (parsed) and other stderr lines. */
class TeamServer {
  constructor(args, nodeArgs = []) {
    this.child = spawn(process.execPath, [...nodeArgs, BIN, 'serve', '--http', ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: benchEnv() });
    this.pid = this.child.pid;
    this.requests = [];
    this.messages = [];
    this.pending = '';
    this.url = new Promise((resolveUrl, rejectUrl) => {
      this.child.stderr.setEncoding('utf8');
      this.child.stderr.on('data', (text) => {
        const lines = (this.pending + text).split('\n');
        this.pending = lines.pop();
        for (const line of lines) {
          if (line.startsWith('{')) {
            try {
              const entry = JSON.parse(line);
              if (entry.path !== undefined) {
                this.requests.push({ at: Date.parse(entry.time), path: entry.path, status: entry.status, ms: entry.duration_ms });
                continue;
              }
            } catch {
              // not a request line: kept as a message below
            }
          }
          this.messages.push(line);
          const match = /serving .* at (http:\/\/\S+?) \(/.exec(line);
          if (match) resolveUrl(match[1]);
        }
      });
      this.exited = new Promise((resolveExit) => {
        this.child.on('close', (code, signal) => {
          rejectUrl(new Error(`serve --http exited (${code ?? signal}) before it said where it listens: ${this.messages.slice(-5).join('\n')}`));
          resolveExit({ code, signal });
        });
      });
    });
  }

  /** Stop it (SIGTERM, then SIGKILL after 30 s); returns a problem or null. */
  async stop() {
    this.child.kill('SIGTERM');
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    const exit = await this.exited;
    clearTimeout(killer);
    return exit.code === 0 || exit.signal === 'SIGTERM' ? null : `serve --http exited with ${exit.code ?? exit.signal}: ${this.messages.slice(-5).join('\n')}`;
  }
}

/**
 * HTTP/1.1 with keep-alive: each request takes an idle connection (or opens one, up to `sockets`),
 * as an agent's HTTP client does. Written on `net` rather than `node:http`: this process shares the
 * two cores with the server it measures, and with node's HTTP client it spent about 0.4 ms of CPU
 * per request (a sixth of the machine at 700 requests a second); with this one, and answers read
 * only for what the clients use, about 0.23 ms. It reads what the team server sends (a status
 * line, headers, a body of `Content-Length` bytes or chunked); a connection the server closed
 * while idle is opened again and the request sent once more, as node's agent does. Every request
 * carries the server's bearer `token`.
 */
function httpClient(baseUrl, sockets, token) {
  const base = new URL(baseUrl);
  const host = `${base.hostname}:${base.port}`;
  const idle = [];
  const waiting = [];
  let open = 0;
  const connect = () =>
    new Promise((resolveConnect, rejectConnect) => {
      const socket = net.connect({ host: base.hostname, port: Number(base.port), noDelay: true });
      socket.once('connect', () => {
        socket.off('error', rejectConnect);
        // An idle connection reset by the server: noticed (destroyed) when next taken.
        socket.on('error', () => {});
        resolveConnect(socket);
      });
      socket.once('error', rejectConnect);
    });
  const take = async () => {
    while (idle.length > 0) {
      const socket = idle.pop();
      if (!socket.destroyed) return { socket, reused: true };
      open--;
    }
    if (open >= sockets) return new Promise((resolveTake) => waiting.push(resolveTake));
    open++;
    try {
      return { socket: await connect(), reused: false };
    } catch (error) {
      open--;
      throw error;
    }
  };
  const give = (socket) => {
    if (socket.destroyed) {
      open--;
      const next = waiting.shift();
      if (next) take().then(next, () => next(undefined));
      return;
    }
    const next = waiting.shift();
    if (next) next({ socket, reused: true });
    else idle.push(socket);
  };
  // One request on one connection: resolves { status, bytes } or rejects (the connection is then destroyed).
  const exchange = (socket, head, payload) =>
    new Promise((resolveExchange, rejectExchange) => {
      let buffered = Buffer.alloc(0);
      let status = 0;
      let bodyAt = -1;
      let length = -1;
      let chunked = false;
      let keepAlive = true;
      const finish = (body) => {
        socket.off('data', onData);
        socket.off('close', onClose);
        socket.off('error', onError);
        if (!keepAlive) socket.destroy();
        resolveExchange({ status, body });
      };
      const fail = (error) => {
        socket.off('data', onData);
        socket.off('close', onClose);
        socket.off('error', onError);
        socket.destroy();
        error.received = buffered.length > 0;
        rejectExchange(error);
      };
      const onError = (error) => fail(error);
      const onClose = () => fail(new Error('connection closed by the server'));
      const onData = (data) => {
        buffered = buffered.length === 0 ? data : Buffer.concat([buffered, data]);
        if (bodyAt < 0) {
          const end = buffered.indexOf('\r\n\r\n');
          if (end < 0) return;
          const lines = buffered.toString('latin1', 0, end).split('\r\n');
          status = Number(lines[0].split(' ')[1]);
          for (let i = 1; i < lines.length; i++) {
            const colon = lines[i].indexOf(':');
            const name = lines[i].slice(0, colon).toLowerCase();
            const value = lines[i].slice(colon + 1).trim().toLowerCase();
            if (name === 'content-length') length = Number(value);
            else if (name === 'transfer-encoding') chunked = value.includes('chunked');
            else if (name === 'connection') keepAlive = value !== 'close';
          }
          bodyAt = end + 4;
        }
        if (chunked) {
          // Whole chunks only; the last is `0\r\n\r\n`.
          const parts = [];
          let at = bodyAt;
          for (;;) {
            const lineEnd = buffered.indexOf('\r\n', at);
            if (lineEnd < 0) return;
            const size = Number.parseInt(buffered.toString('latin1', at, lineEnd), 16);
            if (size === 0) {
              if (buffered.length < lineEnd + 4) return;
              return finish(Buffer.concat(parts));
            }
            if (buffered.length < lineEnd + 2 + size + 2) return;
            parts.push(buffered.subarray(lineEnd + 2, lineEnd + 2 + size));
            at = lineEnd + 2 + size + 2;
          }
        }
        if (length < 0) return fail(new Error('a response with neither Content-Length nor chunked encoding'));
        if (buffered.length >= bodyAt + length) finish(buffered.subarray(bodyAt, bodyAt + length));
      };
      socket.on('data', onData);
      socket.once('close', onClose);
      socket.once('error', onError);
      socket.write(payload === undefined ? head : Buffer.concat([Buffer.from(head, 'latin1'), payload]));
    });
  const send = async (method, path, body) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const head = `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\nAuthorization: Bearer ${token}\r\n${payload === undefined ? '' : `Content-Type: application/json\r\nContent-Length: ${payload.length}\r\n`}\r\n`;
    const started = performance.now();
    for (let attempt = 0; ; attempt++) {
      let taken;
      try {
        taken = await take();
      } catch (error) {
        return { status: 0, ms: performance.now() - started, text: `connect: ${error.message}`, json: null };
      }
      if (!taken) return { status: 0, ms: performance.now() - started, text: 'connect: no connection', json: null };
      try {
        const { status, body: bytes } = await exchange(taken.socket, head, payload);
        const ms = performance.now() - started;
        give(taken.socket);
        const text = bytes.toString('utf8');
        // Parsed on first use only: most answers are counted by their status alone.
        let json;
        return {
          status,
          ms,
          text,
          get json() {
            if (json === undefined) {
              try {
                json = JSON.parse(text);
              } catch {
                json = null; // the caller reports the text
              }
            }
            return json;
          },
        };
      } catch (error) {
        give(taken.socket);
        // A kept-alive connection the server closed while it was idle: once more on a new one.
        if (taken.reused && !error.received && attempt === 0) continue;
        return { status: 0, ms: performance.now() - started, text: `request: ${error.message}`, json: null };
      }
    }
  };
  const close = () => {
    for (const socket of idle) socket.destroy();
    idle.length = 0;
  };
  return { send, close };
}

async function mustSend(client, method, path, body) {
  const answer = await client.send(method, path, body);
  if (answer.status < 200 || answer.status >= 300) throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  return answer;
}

// ---------------------------------------------------------------------------------------------
// One store

/** Everything about one store's run; nothing throws past it (a failure is recorded and ends the store's run). */
async function runStore(store, corpora, options, scratch) {
  const result = { store: store.name, url: store.url, problem: null };
  const folder = join(scratch, store.name);
  mkdirSync(folder, { recursive: true });
  let server;
  let client;
  try {
    if (store.url) {
      log(`${store.name}: emptying the database`);
      await emptyDatabase(store.url);
      if (store.name === 'citus') result.distributed_tables = await distributedTables(store.url);
      store.pids = await databasePids(store.url, store.name === 'citus');
      result.db_pids = store.pids;
    }
    log(`${store.name}: cloning ${corpora.length} corpora`);
    for (const corpus of corpora) await cloneCorpus(corpus.path, join(folder, corpus.name));

    const args = ['--port', '0', '--host', '127.0.0.1', '--data-dir', join(folder, 'server'), '--rate-limit', '0', '--sync-threads', String(options.syncThreads), ...(options.answerThreads === null ? [] : ['--answer-threads', String(options.answerThreads)]), ...(store.url ? ['--store', store.url] : [])];
    server = new TeamServer(args, options.profile ? ['--cpu-prof', '--cpu-prof-dir', join(options.profile, store.name)] : []);
    const url = await server.url;
    result.server_args = args;
    result.rss_start = memory(server.pid);
    // The token the server made in its folder on first start (the default: a loopback server asks for one).
    const token = readFileSync(join(folder, 'server', 'token'), 'utf8').trim();
    client = httpClient(url, options.clients + options.reindex.length + 4, token);

    // Register, then index every repository (as many at once as the server has sync threads).
    const repos = [];
    for (const corpus of corpora) {
      const root = join(folder, corpus.name);
      const added = await client.send('POST', '/repos', { root, name: corpus.name });
      let repoId = added.json?.repo_id;
      if (added.status >= 300) {
        // On Citus, POST /repos answers 500 (the registry's UPDATE … RETURNING to_char(…) is refused on a
        // reference table): register the row the way the server would, and say so in the report.
        if (!(store.url && /non-IMMUTABLE functions are not allowed in the RETURNING clause/.test(added.text))) throw new Error(`POST /repos answered ${added.status}: ${added.text.slice(0, 300)}`);
        result.registered_by_sql ??= added.text.slice(0, 300);
        repoId = await registerBySql(store.url, root, corpus.name);
      }
      repos.push({ ...corpus, repo_id: repoId, root, recentIds: [], outlinePaths: [], index: null });
    }
    const listed = (await mustSend(client, 'GET', '/repos')).json.repos;
    for (const repo of repos) if (!listed.some((entry) => entry.repo_id === repo.repo_id)) throw new Error(`${repo.name} (${repo.repo_id}) is not in GET /repos`);
    log(`${store.name}: indexing ${repos.length} repositories (${options.syncThreads} at a time)`);
    const indexStarted = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: options.syncThreads }, async () => {
        while (next < repos.length) {
          const repo = repos[next++];
          const started = performance.now();
          const answer = await mustSend(client, 'POST', '/index/run', { repo_id: repo.repo_id });
          repo.index = { ms: performance.now() - started, files: answer.json.files_indexed, chunks: answer.json.chunks_total, errors: answer.json.errors?.length ?? 0 };
          log(`${store.name}: ${repo.name} indexed in ${formatMs(repo.index.ms)} (${repo.index.files} files, ${repo.index.chunks} chunks)`);
        }
      }),
    );
    result.index_ms = performance.now() - indexStarted;
    result.rss_after_index = memory(server.pid);
    if (store.url) result.db_bytes = await databaseBytes(store.url, store.name === 'citus');

    // What the clients ask for: catalogued files that have an outline, and chunk ids from a few searches (these also open every engine).
    for (const repo of repos) {
      const files = await mustSend(client, 'GET', `/files?repo_id=${encodeURIComponent(repo.repo_id)}&limit=10000`);
      // Indexed files only: the catalog also lists files held back for a credential ('secret'), which the server refuses by design (403).
      repo.outlinePaths = files.json.files.filter((file) => file.state === 'indexed' && OUTLINE_LANGUAGES.has(file.language)).map((file) => file.path);
      for (const q of repo.queries.slice(0, 3)) {
        const answer = await mustSend(client, 'POST', '/search', { repo_id: repo.repo_id, query: q, top_k: 10 });
        for (const hit of answer.json.results) remember(repo, hit.chunk_id);
      }
    }
    if (options.warmupSeconds > 0) {
      log(`${store.name}: ${options.clients} clients for ${options.warmupSeconds} s to warm the server up (not counted)`);
      await timedPhase(store, server, client, repos, { ...options, seconds: options.warmupSeconds, reindex: [] });
    }
    result.rss_after_warmup = memory(server.pid);

    if (options.quietSeconds > 0) {
      log(`${store.name}: ${options.clients} clients for ${options.quietSeconds} s, nothing re-indexing`);
      result.quiet = await timedPhase(store, server, client, repos, { ...options, seconds: options.quietSeconds, reindex: [], traceAs: 'quiet' });
    }
    log(`${store.name}: ${options.clients} clients for ${options.seconds} s while ${options.reindex.join(' and ')} re-index`);
    result.phase = await timedPhase(store, server, client, repos, { ...options, traceAs: 'reindex' });
    result.rss_end = memory(server.pid);
    result.repos = repos.map((repo) => ({ name: repo.name, repo_id: repo.repo_id, files: repo.index.files, chunks: repo.index.chunks, index_ms: repo.index.ms, index_errors: repo.index.errors, outline_files: repo.outlinePaths.length }));
  } catch (error) {
    result.problem = error.stack ?? String(error);
    log(`${store.name}: FAILED: ${error.message}`);
  } finally {
    client?.close();
    if (server) {
      const problem = await server.stop();
      if (problem) result.problem = [result.problem, problem].filter(Boolean).join('\n');
      result.server_messages = server.messages.filter((line) => line.trim() !== '').slice(-20);
    }
    if (!options.keep) rmSync(folder, { recursive: true, force: true });
  }
  return result;
}

/** The `chunk_id`s of an answer's first `count` results (a search answer names chunk ids in its results only). */
function firstChunkIds(text, count) {
  const ids = [];
  const pattern = /"chunk_id":(\d+)/g;
  for (let match = pattern.exec(text); match !== null && ids.length < count; match = pattern.exec(text)) ids.push(Number(match[1]));
  return ids;
}

/** Keep the last 200 chunk ids a repository's searches returned: what a client fetches next. */
function remember(repo, id) {
  repo.recentIds.push(id);
  if (repo.recentIds.length > 200) repo.recentIds.shift();
}

/** The timed phase: clients and re-index loops until the deadline, CPU and memory around it. */
async function timedPhase(store, server, client, repos, options) {
  const samples = Object.fromEntries(ENDPOINTS.map((name) => [name, []]));
  const errors = [];
  const errorBodies = [];
  let gone = 0;
  let emptySearches = 0;
  let issued = 0;
  const reindexing = repos.filter((repo) => options.reindex.includes(repo.name));
  const reindexRuns = Object.fromEntries(reindexing.map((repo) => [repo.name, { completed: [], late: null, failed: [] }]));

  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  const cpuStart = { server: processCpu(server.pid), main: mainThreadCpu(server.pid), db: sumCpu(options, store), self: process.cpuUsage(), machine: machineCpu() };
  let rssPeak = 0;
  const poller = setInterval(() => {
    const { rss } = memory(server.pid);
    if (rss !== null && rss > rssPeak) rssPeak = rss;
  }, 200);
  loop.enable();
  const wallStarted = Date.now();
  const started = performance.now();
  const deadline = started + options.seconds * 1000;

  const trace = options.trace && options.traceAs ? [] : null;
  const record = (endpoint, answer, repo, what) => {
    trace?.push({ t: Math.round(performance.now() - started - answer.ms), endpoint, repo: repo.name, ms: Math.round(answer.ms * 100) / 100, status: answer.status });
    if (answer.status === 200) {
      samples[endpoint].push(answer.ms);
      return true;
    }
    // A chunk a re-index replaced is gone by design ("search again"): counted, not a failure.
    if (endpoint === 'fetch' && answer.status === 404 && Array.isArray(answer.json?.chunks) && answer.json.chunks.every((chunk) => /is gone/.test(chunk.error ?? ''))) {
      gone++;
      samples[endpoint].push(answer.ms);
      return false;
    }
    errors.push({ endpoint, status: answer.status, repo: repo.name, at_s: (performance.now() - started) / 1000 });
    if (errorBodies.length < ERROR_BODIES_KEPT) errorBodies.push(`${endpoint} ${repo.name} ${what} at ${((performance.now() - started) / 1000).toFixed(1)} s → ${answer.status}: ${answer.text.slice(0, 400)}`);
    return false;
  };

  const clientLoop = async (index) => {
    const rng = createRng(options.seed * 1000 + index);
    while (performance.now() < deadline && issued < options.maxRequests) {
      issued++;
      const repo = repos[Math.floor(rng() * repos.length)];
      const roll = rng();
      let endpoint = roll < MIX.search ? 'search' : roll < MIX.search + MIX.fetch ? 'fetch' : 'outline';
      if (endpoint === 'fetch' && repo.recentIds.length === 0) endpoint = 'search';
      if (endpoint === 'outline' && repo.outlinePaths.length === 0) endpoint = 'search';
      if (endpoint === 'search') {
        const q = repo.queries[Math.floor(rng() * repo.queries.length)];
        const answer = await client.send('POST', '/search', { repo_id: repo.repo_id, query: q, top_k: 10 });
        if (record('search', answer, repo, JSON.stringify(q))) {
          // The first three hits' ids, read off the text: parsing whole answers cost this process a tenth of a core.
          const ids = firstChunkIds(answer.text, 3);
          if (ids.length === 0) emptySearches++;
          for (const id of ids) remember(repo, id);
        }
      } else if (endpoint === 'fetch') {
        const id = repo.recentIds[Math.floor(rng() * repo.recentIds.length)];
        const answer = await client.send('POST', '/fetch', { repo_id: repo.repo_id, ids: [id] });
        record('fetch', answer, repo, `id ${id}`);
      } else {
        const path = repo.outlinePaths[Math.floor(rng() * repo.outlinePaths.length)];
        const answer = await client.send('GET', `/outline?repo_id=${encodeURIComponent(repo.repo_id)}&path=${encodeURIComponent(path)}`);
        record('outline', answer, repo, path);
      }
    }
  };

  // Re-index loops: a full rebuild (force), one after the other, until the deadline; a run still going then is waited for, not counted.
  const reindexLoop = async (repo) => {
    const runs = reindexRuns[repo.name];
    while (performance.now() < deadline) {
      const answer = await client.send('POST', '/hooks/push', { repo_id: repo.repo_id, force: true });
      const ended = performance.now();
      trace?.push({ t: Math.round(ended - started - answer.ms), endpoint: 'reindex', repo: repo.name, ms: Math.round(answer.ms), status: answer.status });
      if (answer.status !== 200) {
        runs.failed.push(`${answer.status}: ${answer.text.slice(0, 300)}`);
        errors.push({ endpoint: 'reindex', status: answer.status, repo: repo.name, at_s: (ended - started) / 1000 });
        if (errorBodies.length < ERROR_BODIES_KEPT) errorBodies.push(`re-index ${repo.name} → ${answer.status}: ${answer.text.slice(0, 400)}`);
        await sleep(500);
        continue;
      }
      const run = { ms: answer.ms, sync_ms: answer.json.duration_ms, generation: answer.json.generation, files: answer.json.files_indexed };
      if (ended <= deadline) runs.completed.push(run);
      else runs.late = run;
    }
  };

  const reindexDone = Promise.all(reindexing.map(reindexLoop));
  await Promise.all(Array.from({ length: options.clients }, (_unused, index) => clientLoop(index)));
  const clientsEnded = performance.now();
  const cpuEnd = { server: processCpu(server.pid), main: mainThreadCpu(server.pid), db: sumCpu(options, store), self: process.cpuUsage(cpuStart.self), machine: machineCpu() };
  const rssAtEnd = memory(server.pid);
  loop.disable();
  clearInterval(poller);
  log(`${store.name}: clients done (${issued} requests); waiting for the re-index runs under way`);
  await reindexDone;
  if (trace) {
    mkdirSync(options.trace, { recursive: true });
    const file = join(options.trace, `${store.name}-${options.traceAs}.jsonl`);
    writeFileSync(file, trace.map((entry) => JSON.stringify(entry)).join('\n') + '\n');
    const serverLog = server.requests
      .filter((entry) => entry.at >= wallStarted)
      .map((entry) => JSON.stringify({ t: entry.at - wallStarted, at: entry.at, path: entry.path, status: entry.status, ms: entry.ms }));
    writeFileSync(join(options.trace, `${store.name}-${options.traceAs}-server.jsonl`), serverLog.join('\n') + '\n');
    log(`${store.name}: trace of ${trace.length} requests in ${file}, the server's log of them beside it`);
  }

  const elapsed = (clientsEnded - started) / 1000;
  const completed = ENDPOINTS.reduce((sum, name) => sum + samples[name].length, 0);
  // The server's own durations (its request log, whole milliseconds) for the requests of the phase.
  const serverSide = Object.fromEntries(ENDPOINTS.map((name) => [name, summarize(server.requests.filter((entry) => entry.path === PATHS[name] && entry.at >= wallStarted && entry.status < 500).map((entry) => entry.ms))]));
  const cpu = {
    server_s: cpuStart.server !== null && cpuEnd.server !== null ? cpuEnd.server - cpuStart.server : null,
    server_main_thread_s: cpuStart.main !== null && cpuEnd.main !== null ? cpuEnd.main - cpuStart.main : null,
    db_s: cpuStart.db !== null && cpuEnd.db !== null ? cpuEnd.db - cpuStart.db : null,
    loadgen_s: (cpuEnd.self.user + cpuEnd.self.system) / 1e6,
    machine_busy_s: cpuStart.machine && cpuEnd.machine ? cpuEnd.machine.busy - cpuStart.machine.busy : null,
    machine_total_s: cpuStart.machine && cpuEnd.machine ? cpuEnd.machine.total - cpuStart.machine.total : null,
  };
  return {
    seconds: elapsed,
    issued,
    completed,
    throughput: completed / elapsed,
    capped: issued >= options.maxRequests,
    endpoints: Object.fromEntries(ENDPOINTS.map((name) => [name, summarize(samples[name])])),
    server_side: serverSide,
    errors: errors.length,
    errors_by_endpoint: Object.fromEntries([...ENDPOINTS, 'reindex'].map((name) => [name, errors.filter((e) => e.endpoint === name).length])),
    error_bodies: errorBodies,
    fetch_gone: gone,
    empty_searches: emptySearches,
    reindex: Object.fromEntries(Object.entries(reindexRuns).map(([name, runs]) => [name, { completed: runs.completed.length, wall_ms: summarize(runs.completed.map((run) => run.ms)), sync_ms: summarize(runs.completed.map((run) => run.sync_ms)), last_generation: runs.late?.generation ?? runs.completed.at(-1)?.generation ?? null, failed: runs.failed.length }])),
    rss_peak: rssPeak,
    rss_at_end: rssAtEnd,
    cpu,
    // The histogram holds whole timer periods: what lies beyond the sampling interval is the delay.
    loadgen_loop_delay_ms: { p50: loop.percentile(50) / 1e6 - LOOP_RESOLUTION_MS, p99: loop.percentile(99) / 1e6 - LOOP_RESOLUTION_MS, max: loop.max / 1e6 - LOOP_RESOLUTION_MS },
  };
}

function sumCpu(options, store) {
  if (!store.pids || store.pids.length === 0) return null;
  let total = 0;
  for (const pid of store.pids) {
    const value = postgresCpu(pid);
    if (value === null) return null;
    total += value;
  }
  return total;
}

// ---------------------------------------------------------------------------------------------
// Report

const STORE_LABEL = { fs: 'embedded', postgres: 'PostgreSQL', citus: 'Citus (3 nodes)' };

function report(results, corpora, options, machine, commit) {
  const out = [];
  const write = (line = '') => out.push(line);
  const totalFiles = corpora.reduce((sum, corpus) => sum + corpus.files, 0);
  write(`team server under load, ${corpora.length} repositories (${totalFiles.toLocaleString('en-US')} files with indexed extensions), ${options.clients} clients × ${options.seconds} s, ${options.reindex.join(' and ')} re-indexing (force) throughout${options.quietSeconds > 0 ? ` (after ${options.quietSeconds} s of the same load with nothing re-indexing)` : ''}`);
  write(`commit ${commit}; ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; ${describeMachine(machine)}`);
  write(`server: serve --http --rate-limit 0 --sync-threads ${options.syncThreads} ${options.answerThreads === null ? `(answer threads: the server's default, ${Math.max(1, Math.min(4, os.availableParallelism() - 1))} here)` : `--answer-threads ${options.answerThreads}`}; lexical index (embeddings off in every clone); clients: ${options.clients} keep-alive HTTP connections from this one Node process, no think time; mix ${Math.round(MIX.search * 100)}% search (top_k 10), ${Math.round(MIX.fetch * 100)}% fetch (one chunk id from an earlier answer), ${Math.round((1 - MIX.search - MIX.fetch) * 100)}% outline; uniform over repositories; ${options.warmupSeconds > 0 ? `the first ${options.warmupSeconds} s of this load warmed the server up and are not counted` : 'no warm-up'}`);
  write();
  const ok = results.filter((result) => result.phase);
  // Each store's timed phase, after its quiet one when there was one.
  const phases = ok.flatMap((result) => [
    ...(result.quiet ? [{ result, phase: result.quiet, label: `${STORE_LABEL[result.store]}, quiet` }] : []),
    { result, phase: result.phase, label: result.quiet ? `${STORE_LABEL[result.store]}, re-indexing` : STORE_LABEL[result.store] },
  ]);
  const rows = phases.map(({ result, phase, label }) => {
    const reindex = Object.entries(phase.reindex).map(([name, runs]) => `${name} ${runs.completed}× (${formatMs(runs.wall_ms?.median ?? null)})`).join(', ') || 'none';
    // Per-store figures go on the store's first row.
    const first = phase === (result.quiet ?? result.phase);
    return [
      label,
      first ? formatMs(result.index_ms) : '',
      `${phase.throughput.toFixed(0)}/s`,
      String(phase.completed),
      String(phase.errors),
      reindex,
      first ? formatBytes(result.rss_after_warmup.rss) : '',
      formatBytes(phase.rss_peak),
      phase === result.phase ? formatBytes(result.rss_end.hwm) : '',
      first && result.db_bytes !== undefined ? formatBytes(result.db_bytes) : first ? '—' : '',
    ];
  });
  write(renderTable(['store', 'index all', 'throughput', 'requests', 'errors', 're-index runs (median)', 'RSS before timed load', 'RSS peak in load', 'VmHWM at end', 'database size'], rows, ['l', 'r', 'r', 'r', 'r', 'l', 'r', 'r', 'r', 'r']));
  write();
  const latencyRows = [];
  for (const { phase, label } of phases) {
    for (const name of ENDPOINTS) {
      const client = phase.endpoints[name];
      const server = phase.server_side[name];
      latencyRows.push([label, name, String(client?.n ?? 0), formatMs(client?.median ?? null), formatMs(client?.p99 ?? null), formatMs(client?.max ?? null), formatMs(server?.median ?? null), formatMs(server?.p99 ?? null)]);
    }
  }
  write(renderTable(['store', 'endpoint', 'n', 'p50', 'p99', 'max', 'server p50', 'server p99'], latencyRows, ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r']));
  write();
  const cpuRows = phases.map(({ phase, label }) => {
    const { cpu, seconds } = phase;
    const cores = (value) => (value === null ? '—' : `${(value / seconds).toFixed(2)}`);
    return [label, cores(cpu.server_s), cores(cpu.server_main_thread_s), cores(cpu.db_s), cores(cpu.loadgen_s), cores(cpu.machine_busy_s), `${formatMs(phase.loadgen_loop_delay_ms.p99)}`];
  });
  write(`CPU in each timed phase, in cores busy on average (this machine has ${machine.cores}):`);
  write();
  write(renderTable(['store', 'server (all threads)', 'of which main thread', 'database (all nodes)', 'load generator', 'whole machine', 'load generator loop delay p99'], cpuRows, ['l', 'r', 'r', 'r', 'r', 'r', 'r']));
  write();
  for (const { result, phase, label } of phases) {
    const target = TARGETS.searchP99[result.store];
    const p99 = phase.endpoints.search?.p99 ?? null;
    write(
      `${label}: search p99 ${formatMs(p99)} (target ≤ ${target} ms: ${p99 !== null && p99 <= target ? 'PASS' : 'MISS'}); failed requests ${phase.errors} (target 0: ${phase.errors === 0 ? 'PASS' : 'MISS'})` +
        `${phase.fetch_gone > 0 ? `; ${phase.fetch_gone} fetches of a chunk a re-index replaced (404 "gone: search again", not failures)` : ''}; ${phase.empty_searches} searches with no hit${phase.capped ? `; stopped at --max-requests ${options.maxRequests}` : ''}`,
    );
    for (const body of phase.error_bodies) write(`  failed: ${body}`);
  }
  for (const result of results.filter((entry) => entry.registered_by_sql)) write(`${STORE_LABEL[result.store]}: POST /repos failed, so the repositories were registered in the repos table by SQL (as the server's registry does): ${result.registered_by_sql}`);
  for (const result of results.filter((entry) => entry.problem)) write(`${STORE_LABEL[result.store]}: PROBLEM: ${result.problem.split('\n').slice(0, 6).join('\n  ')}`);
  write();
  write('index time per repository (POST /index/run, first build):');
  write();
  const names = corpora.map((corpus) => corpus.name);
  write(renderTable(['repository', 'files', 'chunks', ...ok.map((result) => STORE_LABEL[result.store])], names.map((name) => {
    const first = ok[0]?.repos?.find((repo) => repo.name === name);
    return [name, String(first?.files ?? '—'), String(first?.chunks ?? '—'), ...ok.map((result) => formatMs(result.repos?.find((repo) => repo.name === name)?.index_ms ?? null))];
  }), ['l', 'r', 'r', ...ok.map(() => 'r')]));
  return `${out.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const parsed = parseCommandLine();
  if (parsed.exit !== undefined) {
    if (parsed.exit === 0) process.stdout.write(`${USAGE}\n`);
    process.exit(parsed.exit);
  }
  const { options } = parsed;
  // The report names HEAD: a build older than the sources would measure something else under that name.
  const built = existsSync(join(REPO, 'dist', 'http-server.js')) ? statSync(join(REPO, 'dist', 'http-server.js')).mtimeMs : 0;
  if (built < newestMtime(join(REPO, 'src'))) {
    process.stderr.write('dist/ is older than src/ (or missing): run `npm run build` first\n');
    process.exit(1);
  }
  const machine = machineInfo();
  const commit = git(REPO, ['rev-parse', '--short', 'HEAD']) ?? 'unknown';
  log(`sampling queries from ${options.corpora.length} corpora`);
  const corpora = options.corpora.map((path, i) => {
    const files = listCorpusFiles(path, corpusSelection(path));
    const queries = sampleQueries(path, files, 100, options.seed + i).queries.map((query) => query.q);
    return { path, name: basename(path), files: files.length, queries, commit: git(path, ['rev-parse', '--short', 'HEAD']) };
  });
  const scratch = mkdtempSync(join(os.tmpdir(), 'repodex-server-load-'));
  const results = [];
  const stop = () => {
    if (!options.keep) rmSync(scratch, { recursive: true, force: true });
    process.exit(130);
  };
  process.once('SIGINT', stop);
  try {
    for (const name of options.stores) {
      const store = { name, url: options.urls[name] };
      const result = await runStore(store, corpora, options, scratch);
      results.push(result);
      if (result.phase) log(`${name}: ${result.phase.throughput.toFixed(0)} req/s, search p99 ${formatMs(result.phase.endpoints.search?.p99 ?? null)}, ${result.phase.errors} errors`);
    }
  } finally {
    if (!options.keep) rmSync(scratch, { recursive: true, force: true });
  }
  process.stdout.write(report(results, corpora, options, machine, commit));
  if (options.json) {
    writeFileSync(options.json, `${JSON.stringify({ machine, commit, options: { ...options, urls: undefined }, corpora: corpora.map(({ queries, ...corpus }) => ({ ...corpus, queries: queries.length })), results }, null, 2)}\n`);
  }
  if (results.some((result) => result.problem || (result.phase && result.phase.errors > 0) || (result.quiet && result.quiet.errors > 0))) process.exitCode = 1;
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
