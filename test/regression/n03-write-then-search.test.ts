import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, makeRepo, prng, runCli } from '../helpers.js';

/**
 * An agent writes a file and searches for it at once: the answer must hold the change, or say
 * `dirty: true` with a warning. Never "not there" while claiming to be fresh. Each round makes one
 * change — a new file, an edit that renames the identifier in a file, or a removed file — and
 * sends the search the instant the write returns.
 */
const ROUNDS = 200;

interface SearchData {
  readonly results: { readonly path: string; readonly snippet: string }[];
  readonly freshness: { readonly dirty: boolean };
  readonly warnings: string[];
}

type Ask = (query: string) => Promise<SearchData>;

/** Run the rounds against `ask`; returns what went wrong, one line per round (empty when nothing did). */
async function writeThenSearch(root: string, ask: Ask): Promise<{ wrong: string[]; dirtyAnswers: number }> {
  const rng = prng(16);
  const live = new Map<string, string>(); // path → the identifier it declares now
  const gone: { path: string; identifier: string }[] = [];
  const wrong: string[] = [];
  let dirtyAnswers = 0;
  const word = (): string => `ident${Math.floor(rng() * 1e9).toString(36)}x${live.size}`;
  for (let round = 0; round < ROUNDS; round++) {
    const kind = live.size < 3 ? 'create' : (['create', 'edit', 'remove'] as const)[Math.floor(rng() * 3)]!;
    let path: string;
    let identifier: string;
    let expectFound: boolean;
    if (kind === 'create') {
      identifier = word();
      path = `src/r${round}.ts`;
      writeFileSync(join(root, path), `export const ${identifier} = ${round};\n`);
      live.set(path, identifier);
      expectFound = true;
    } else if (kind === 'edit') {
      path = [...live.keys()][Math.floor(rng() * live.size)]!;
      gone.push({ path, identifier: live.get(path)! });
      identifier = word();
      writeFileSync(join(root, path), `export const ${identifier} = ${round};\n`);
      live.set(path, identifier);
      expectFound = true;
    } else {
      path = [...live.keys()][Math.floor(rng() * live.size)]!;
      identifier = live.get(path)!;
      rmSync(join(root, path));
      live.delete(path);
      gone.push({ path, identifier });
      expectFound = false;
    }
    const answer = await ask(identifier);
    if (answer.freshness.dirty) {
      dirtyAnswers++;
      if (answer.warnings.length === 0) wrong.push(`round ${round} (${kind} ${path}): dirty without a warning`);
      continue;
    }
    // The identifier itself, in the file's answer: a new name shares tokens (ident, x) with the old one.
    const found = answer.results.some((hit) => hit.path === path && hit.snippet.includes(identifier));
    if (found !== expectFound) wrong.push(`round ${round} (${kind} ${path}): ${expectFound ? 'missing' : 'still served'} while dirty:false`);
  }
  // What was edited away or removed is not served by a fresh answer either.
  for (const { path, identifier } of gone.slice(-10)) {
    const answer = await ask(identifier);
    if (!answer.freshness.dirty && answer.results.some((hit) => hit.snippet.includes(identifier))) wrong.push(`${identifier} still served from ${path}`);
  }
  return { wrong, dirtyAnswers };
}

function seededRepo(): string {
  const root = makeRepo({ 'src/seed.ts': 'export const seedValue = 1;\n', 'README.md': '# write then search\n' });
  const sync = runCli(['sync', '--root', root]);
  expect(sync.code, sync.stderr).toBe(0);
  return root;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** `serve --stdio` with a line reader: one request, one answer. */
function jsonl(root: string): Ask {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [CLI, 'serve', '--stdio', '--root', root], { env: { ...process.env, NO_COLOR: '1' } });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  closers.push(async () => {
    child.stdin.end();
    await new Promise((resolve) => child.once('exit', resolve));
  });
  return async (query) => {
    child.stdin.write(`${JSON.stringify({ op: 'search', q: query, top_k: 5 })}\n`);
    const line = await lines.next();
    if (line.done) throw new Error(`serve --stdio ended: ${stderr}`);
    const response = JSON.parse(line.value) as { ok: boolean; data: SearchData; error?: string };
    if (!response.ok) throw new Error(`search failed: ${response.error}`);
    return response.data;
  };
}

async function mcp(root: string): Promise<Ask> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', '--mcp', '--root', root], stderr: 'pipe', env: { ...process.env, NO_COLOR: '1' } as Record<string, string> });
  const client = new Client({ name: 'write-then-search', version: '1.0.0' });
  await client.connect(transport);
  closers.push(() => client.close());
  return async (query) => {
    const result = await client.callTool({ name: 'repo.search', arguments: { query, top_k: 5 } });
    const envelope = result.structuredContent as { ok: boolean; result: SearchData; warnings: string[] };
    if (!envelope.ok) throw new Error(`search failed: ${JSON.stringify(envelope)}`);
    return { ...envelope.result, warnings: [...envelope.result.warnings, ...envelope.warnings] };
  };
}

describe('write then search at once: never missing while saying dirty:false (N3)', () => {
  it(`JSONL: ${ROUNDS} rounds of create, edit and remove, each searched the instant the write returns`, async () => {
    const root = seededRepo();
    const { wrong, dirtyAnswers } = await writeThenSearch(root, jsonl(root));
    expect(wrong).toEqual([]);
    // Automatic indexing is on: every answer brought the index up to date first.
    expect(dirtyAnswers).toBe(0);
  }, 180_000);

  it(`MCP: ${ROUNDS} rounds through the SDK client`, async () => {
    const root = seededRepo();
    const { wrong, dirtyAnswers } = await writeThenSearch(root, await mcp(root));
    expect(wrong).toEqual([]);
    expect(dirtyAnswers).toBe(0);
  }, 180_000);

  it('a folder removed and made again under its name (a branch switch does it) is watched again: later writes in it are never missed', async () => {
    const root = makeRepo({ 'src/seed.ts': 'export const seedValue = 1;\n', 'a/alpha.ts': 'export const alphaValue = 1;\n' });
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    const ask = jsonl(root);
    expect((await ask('alphaValue')).results[0]?.path).toBe('a/alpha.ts');
    for (let round = 0; round < 3; round++) {
      // Removed and made again in one go: the watch of the old folder is dead; a new one must take its place.
      rmSync(join(root, 'a'), { recursive: true });
      mkdirSync(join(root, 'a'));
      writeFileSync(join(root, 'a/beta.ts'), `export const betaValue${round} = ${round};\n`);
      expect((await ask(`betaValue${round}`)).results[0]?.path).toBe('a/beta.ts');
      // Then a write into the new folder, searched at once.
      writeFileSync(join(root, `a/later${round}.ts`), `export const laterValue${round} = ${round};\n`);
      const answer = await ask(`laterValue${round}`);
      expect(answer.freshness.dirty || answer.results.some((hit) => hit.path === `a/later${round}.ts`), `round ${round}: a/later${round}.ts missing while dirty:false`).toBe(true);
    }
  }, 60_000);

  it('with automatic indexing off, a change not yet indexed is answered dirty:true with the stale warning', async () => {
    const root = seededRepo();
    const child = spawn(process.execPath, [CLI, 'serve', '--stdio', '--root', root], { env: { ...process.env, NO_COLOR: '1', REPODEX_INDEXING: '0' } });
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    closers.push(async () => {
      child.stdin.end();
      await new Promise((resolve) => child.once('exit', resolve));
    });
    for (let i = 0; i < 20; i++) {
      writeFileSync(join(root, `src/late${i}.ts`), `export const lateArrival${i} = ${i};\n`);
      child.stdin.write(`${JSON.stringify({ op: 'search', q: `lateArrival${i}` })}\n`);
      const answer = JSON.parse((await lines.next()).value as string) as { data: SearchData };
      expect(answer.data.results.some((hit) => hit.path === `src/late${i}.ts`)).toBe(false);
      expect(answer.data.freshness.dirty).toBe(true);
      expect(answer.data.warnings.join(' ')).toMatch(/index is stale .*run `repodex sync`/);
    }
  }, 60_000);
});
