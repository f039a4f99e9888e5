import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, makeRepo } from '../helpers.js';

const SOURCES = {
  'src/http/client.ts': [
    'export interface RetryPolicy { attempts: number; backoffMs: number }',
    '',
    'export class HttpClient {',
    '  constructor(private readonly policy: RetryPolicy) {}',
    '',
    '  /** Send a request, retrying failed attempts with backoff. */',
    '  async sendWithRetries(url: string): Promise<string> {',
    '    for (let attempt = 0; attempt < this.policy.attempts; attempt++) {',
    '      const response = await fetch(url);',
    '      if (response.ok) return response.text();',
    '      await new Promise((resolve) => setTimeout(resolve, this.policy.backoffMs));',
    '    }',
    "    throw new Error('request failed after retries');",
    '  }',
    '}',
    '',
  ].join('\n'),
  'src/config/load.ts': 'export function loadConfig(path: string): Record<string, string> {\n  return { path };\n}\n',
  'src/http/client.test.ts': "import { HttpClient } from './client';\n\ntest('retries', () => new HttpClient({ attempts: 2, backoffMs: 1 }));\n",
  'README.md': '# Demo\n\nAn HTTP client with retries.\n',
  '.env': 'API_KEY=do-not-serve\n',
};

let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

async function connect(root: string, extra: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', '--mcp', '--root', root, ...extra], stderr: 'pipe', env: { ...process.env, NO_COLOR: '1' } as Record<string, string> });
  client = new Client({ name: 'repodex-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

interface Envelope {
  request_id: string;
  ok: boolean;
  result: Record<string, unknown> | null;
  warnings: string[];
  blocked: boolean;
  error?: { code: string; message: string; hint?: string };
}

async function callTool(mcp: Client, name: string, args: Record<string, unknown> = {}): Promise<Envelope> {
  const result = await mcp.callTool({ name, arguments: args });
  const envelope = result.structuredContent as unknown as Envelope;
  // The same envelope as text, for clients that read content only.
  const text = (result.content as { type: string; text: string }[])[0]!;
  expect(text.type).toBe('text');
  expect(JSON.parse(text.text)).toEqual(envelope);
  expect(result.isError ?? false).toBe(!envelope.ok);
  expect(Object.keys(envelope).sort()).toEqual(expect.arrayContaining(['blocked', 'ok', 'request_id', 'result', 'warnings']));
  return envelope;
}

describe('repodex serve --mcp, driven by the MCP SDK client over stdio', () => {
  it('lists the eight tools with input and output schemas, and answers a realistic session that the audit log records', async () => {
    const root = makeRepo(SOURCES);
    execFileSync('git', ['init', '-q'], { cwd: root });
    const mcp = await connect(root);

    const { tools } = await mcp.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(
      ['repo.audit_log', 'repo.build_context_bundle', 'repo.list_files', 'repo.open_file', 'repo.outline', 'repo.refresh_index', 'repo.search', 'repo.status'].sort(),
    );
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(tool.description?.length ?? 0, tool.name).toBeGreaterThan(40);
    }

    // The client validates every structuredContent against the tool's outputSchema (callTool throws otherwise).
    const status = await callTool(mcp, 'repo.status');
    expect(status.ok).toBe(true);
    expect(status.result).toMatchObject({ root, repo_root: root, state: 'pending', last_sync: null, files: 0, limits: { max_open_lines: 120, max_search_hits: 20 } });
    expect(status.result!.adapters).toContain('typescript');

    const search = await callTool(mcp, 'repo.search', { query: 'send request with retries', top_k: 5 });
    expect(search.ok).toBe(true);
    const results = search.result!.results as { path: string; start_line: number; end_line: number; why: string[]; snippet: string; score: number }[];
    expect(results[0]).toMatchObject({ path: 'src/http/client.ts' });
    expect(results[0]!.why.length).toBeGreaterThan(0);
    expect((search.result!.synced as { mode: string }).mode).toBe('full'); // auto-indexed first

    const opened = await callTool(mcp, 'repo.open_file', { path: 'src/http/client.ts', start_line: 7, end_line: 9 });
    expect(opened.result).toMatchObject({ start_line: 7, end_line: 9, truncated: false, next_start: 10 });
    expect((opened.result!.lines as string[])[0]).toBe('7|   async sendWithRetries(url: string): Promise<string> {');

    const outline = await callTool(mcp, 'repo.outline', { path: 'src/http/client.ts' });
    const symbols = outline.result!.symbols as { name: string; parent_symbol: string | null; scope_kind: string }[];
    expect(symbols.find((symbol) => symbol.name === 'sendWithRetries')).toMatchObject({ parent_symbol: 'HttpClient', scope_kind: 'class' });

    const files = await callTool(mcp, 'repo.list_files', { glob: 'src/**' });
    expect((files.result!.files as { path: string; size: number; mtime: string }[]).map((file) => file.path)).toEqual(['src/config/load.ts', 'src/http/client.test.ts', 'src/http/client.ts']);

    const refreshed = await callTool(mcp, 'repo.refresh_index', {});
    expect(refreshed.result).toMatchObject({ mode: 'none', files_added: 0, files_updated: 0, files_removed: 0 });
    expect(typeof refreshed.result!.synced_at).toBe('string');

    const bundle = await callTool(mcp, 'repo.build_context_bundle', { prompt: 'Add jitter to the retry backoff of HttpClient', budget: { max_files: 2, max_total_lines: 30 } });
    const excerpts = bundle.result!.excerpts as { citation: string; rationale: string; lines: string[] }[];
    expect(excerpts[0]!.citation).toMatch(/^src\/http\/client\.ts:\d+-\d+$/);
    expect(excerpts.reduce((sum, excerpt) => sum + excerpt.lines.length, 0)).toBeLessThanOrEqual(30);
    expect(excerpts.every((excerpt) => !excerpt.citation.includes('.test.'))).toBe(true);
    expect(existsSync(join(root, '.repodex', 'last_bundle.md'))).toBe(true);

    const blocked = await callTool(mcp, 'repo.open_file', { path: '.env' });
    expect(blocked).toMatchObject({ ok: false, blocked: true, error: { code: 'BLOCKED' } });
    expect(blocked.error!.hint).toBeTruthy();
    expect(JSON.stringify(blocked)).not.toContain('do-not-serve');

    const bad = await callTool(mcp, 'repo.search', { query: 'x', top_k: 0 });
    expect(bad).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST' } });
    expect(bad.error!.message).toContain('top_k');

    const audit = await callTool(mcp, 'repo.audit_log', { limit: 50 });
    const entries = audit.result!.entries as { tool?: string; frontend: string; outcome: string; blocked: boolean; request_id: string; args: Record<string, unknown> }[];
    const calls = [status, search, opened, outline, files, refreshed, bundle, blocked, bad];
    for (const answered of calls) {
      const entry = entries.find((candidate) => candidate.request_id === answered.request_id);
      expect(entry, `audit entry for ${answered.request_id}`).toBeDefined();
    }
    expect(entries.map((entry) => entry.tool)).toEqual([
      'repo.status',
      'repo.search',
      'repo.open_file',
      'repo.outline',
      'repo.list_files',
      'repo.refresh_index',
      'repo.build_context_bundle',
      'repo.open_file',
      'repo.search',
    ]);
    expect(entries.every((entry) => entry.frontend === 'mcp')).toBe(true);
    expect(entries[7]).toMatchObject({ outcome: 'BLOCKED', blocked: true, args: { path: '.env' } });
    expect(entries[8]!.outcome).toBe('BAD_REQUEST');
    // Never file contents: the log holds arguments, not answers.
    const log = readFileSync(join(root, '.repodex', 'audit.jsonl'), 'utf8');
    expect(log).not.toContain('sendWithRetries(url');
    expect(log).not.toContain('do-not-serve');
  });

  it('answers every request already sent when the client closes its input (raw JSON-RPC over a pipe)', () => {
    const root = makeRepo(SOURCES);
    const messages = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'repo.open_file', arguments: { path: 'src/config/load.ts' } } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'repo_outline', arguments: { path: 'src/http/client.ts' } } },
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'repo.search', arguments: { query: 'retries' } } },
      { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'repo.nope', arguments: {} } },
    ];
    const result = spawnSync(process.execPath, [CLI, 'serve', '--mcp', '--root', root], { input: messages.map((message) => `${JSON.stringify(message)}\n`).join(''), encoding: 'utf8', timeout: 60_000 });
    expect(result.status, result.stderr).toBe(0);
    const replies = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: number; result: { structuredContent?: { ok: boolean }; isError?: boolean; content: { text: string }[] } });
    expect(replies.map((reply) => reply.id).sort()).toEqual([1, 2, 3, 4, 5]);
    for (const id of [2, 3, 4]) expect(replies.find((reply) => reply.id === id)!.result.structuredContent!.ok, `id ${id}`).toBe(true);
    const unknown = replies.find((reply) => reply.id === 5)!.result;
    expect(unknown.isError).toBe(true);
    expect(unknown.content[0]!.text).toMatch(/unknown tool "repo.nope": the tools are repo.status, /);
  });

  it('--tool-names underscore lists repo_search and friends; both spellings are answered either way', async () => {
    const root = makeRepo(SOURCES);
    const mcp = await connect(root, ['--tool-names', 'underscore']);
    const { tools } = await mcp.listTools();
    expect(tools.map((tool) => tool.name)).toContain('repo_search');
    expect(tools.some((tool) => tool.name.includes('.'))).toBe(false);
    expect((await callTool(mcp, 'repo_status')).ok).toBe(true);
    expect((await callTool(mcp, 'repo.status')).ok).toBe(true);
  });

  it('flags set limits over config and defaults, and a cut answer says how to get the rest', async () => {
    const long = Array.from({ length: 400 }, (_, i) => `export const value${i} = ${i};`).join('\n');
    const root = makeRepo({ ...SOURCES, 'src/long.ts': long, '.repodex/config.json': JSON.stringify({ limits: { max_open_lines: 50 } }) });
    const mcp = await connect(root, ['--max-open-lines', '30', '--max-search-hits', '3']);
    const opened = await callTool(mcp, 'repo.open_file', { path: 'src/long.ts' });
    expect(opened.result).toMatchObject({ start_line: 1, end_line: 30, truncated: true, next_start: 31 });
    const status = await callTool(mcp, 'repo.status');
    expect(status.result!.limits).toMatchObject({ max_open_lines: 30, max_search_hits: 3, max_total_bytes_per_response: 48 * 1024 });
    const search = await callTool(mcp, 'repo.search', { query: 'value export const', top_k: 20 });
    expect((search.result!.results as unknown[]).length).toBeLessThanOrEqual(3);
  });
});
