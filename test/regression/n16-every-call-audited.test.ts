import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { committedRepo, makeRepo, runCli, tempDir } from '../helpers.js';
import { type Json, startTeamServer } from '../team-server.js';
import { mcpLines } from './mcp-lines.js';

interface AuditLine {
  frontend: string;
  op: string;
  tool?: string;
  outcome: string;
  args: Record<string, unknown>;
}

function repo(): string {
  const root = makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', 'a.ts': 'export const a = 1;\n' });
  expect(runCli(['sync', '--root', root, '--embeddings', 'off']).code).toBe(0);
  return root;
}

/** The audit log's lines, checked to be valid UTF-8 JSON lines of bounded size. */
function auditLines(root: string): AuditLine[] {
  const bytes = readFileSync(join(root, '.repodex', 'audit.jsonl'));
  const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  const lines = text.trim().split('\n');
  for (const line of lines) expect(Buffer.byteLength(line)).toBeLessThan(4096);
  return lines.map((line) => JSON.parse(line) as AuditLine);
}

describe('N16: every call is a line in the audit log, refused ones included', () => {
  it('N16: unknown JSONL ops and lines that are no request (invalid JSON, not UTF-8, not an object, oversized) each leave a refusal line', () => {
    const root = repo();
    const before = auditLines(root).length;
    const input = Buffer.concat([
      Buffer.from('{"op":"status"}\n'),
      Buffer.from('garbage\n'),
      Buffer.from('{"op":"nope","q":"x"}\n'),
      Buffer.from([0xff, 0xfe, 0x7b, 0x7d, 0x0a]), // not UTF-8
      Buffer.from('[1,2]\n'),
      Buffer.from(`{"op":"search","q":"${'a'.repeat(1_200_000)}"}\n`), // over the 1 MiB line limit
      Buffer.from(`{"op":"${'x'.repeat(5000)}"}\n`),
    ]);
    const served = runCli(['serve', '--stdio', '--root', root], { input });
    expect(served.stdout.trim().split('\n')).toHaveLength(7);
    const added = auditLines(root).slice(before);
    expect(added.map((entry) => [entry.frontend, entry.outcome])).toEqual([
      ['jsonl', 'ok'],
      ['jsonl', 'BAD_REQUEST'],
      ['jsonl', 'BAD_REQUEST'],
      ['jsonl', 'BAD_REQUEST'],
      ['jsonl', 'BAD_REQUEST'],
      ['jsonl', 'BAD_REQUEST'],
      ['jsonl', 'BAD_REQUEST'],
    ]);
    expect(added[1]!.args).toMatchObject({ problem: expect.stringContaining('invalid JSON') as string, line: 'garbage' });
    expect(added[2]).toMatchObject({ op: 'nope', args: { q: 'x' } });
    expect(added[3]!.args).toMatchObject({ problem: 'request is not valid UTF-8', bytes: 4 });
    expect(added[5]!.args).toMatchObject({ problem: expect.stringContaining('line limit') as string });
    expect(added[6]!.op.length).toBeLessThan(100);
  });

  it('N16: unknown MCP tools and malformed MCP calls each leave a refusal line', () => {
    const root = repo();
    const before = auditLines(root).length;
    const replies = mcpLines(root, [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'repo.nope', arguments: { a: 1 } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'repo.search', arguments: [1] } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { arguments: {} } },
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'repo.search', arguments: { query: '' } } },
      'not json',
    ]);
    expect(replies).toHaveLength(5);
    const added = auditLines(root).slice(before);
    expect(added).toHaveLength(5);
    for (const entry of added) expect(entry).toMatchObject({ frontend: 'mcp', outcome: 'BAD_REQUEST' });
    expect(added.map((entry) => entry.tool ?? null).sort()).toEqual([null, null, 'repo.nope', 'repo.search', 'repo.search']);
  });

  it('N16: the CLI’s bad requests (a flag that is no number, a missing query or path, a value out of range, an unknown flag) each leave a refusal line', () => {
    const root = repo();
    const before = auditLines(root).length;
    const refused = [
      ['search', 'alpha', '--top-k', 'many'],
      ['search'],
      ['search', 'alpha', '--top-k', '0'],
      ['open'],
      ['fetch', '--ids', 'x'],
      ['search', 'alpha', '--topk', '3'],
      ['audit', '--since', 'yesterday'],
    ];
    for (const args of refused) {
      const run = runCli([...args, '--root', root], { env: { REPODEX_DAEMON: '0' } });
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr, args.join(' ')).toContain('(bad request)');
    }
    const added = auditLines(root).slice(before);
    expect(added.map((entry) => [entry.frontend, entry.op, entry.outcome])).toEqual(refused.map((args) => ['cli', args[0], 'BAD_REQUEST']));
    expect(added[0]!.args).toMatchObject({ q: 'alpha', top_k: 'many' });
    expect(added[2]!.args).toMatchObject({ q: 'alpha', top_k: 0 });
    expect(added[5]!.args).toMatchObject({ topk: true, problem: expect.stringContaining('did you mean --top-k?') as string });
  });

  it('N16: the HTTP API’s bad requests each leave a refusal line in the server’s log, under the id the answer carries', async () => {
    const dataDir = tempDir();
    const root = committedRepo({ 'a.ts': 'export const alpha = 1;\n' });
    const server = await startTeamServer([root], { dataDir });
    let ids: string[];
    try {
      const repoId = (await server.request('/repos')).body.repos[0].repo_id as string;
      const answers = [
        await server.request('/search', { body: { repo_id: repoId, query: '' } }),
        await server.request(`/open?repo_id=${repoId}&path=a.ts&start=first`),
        await server.request('/bundle', { body: { repo_id: repoId, prompt: 'alpha', colour: 'blue' } }),
      ];
      for (const answer of answers) expect(answer.status).toBe(400);
      expect(answers[0]!.body).toMatchObject({ ok: false, code: 'BAD_REQUEST', error: 'query: must not be empty' });
      ids = answers.map((answer) => answer.body.request_id as string);
    } finally {
      await server.stop();
    }
    const audited = readFileSync(join(dataDir, 'audit.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Json);
    const refusals = ids.map((id) => audited.find((entry) => entry.request_id === id));
    expect(refusals.map((entry) => [entry?.frontend, entry?.op, entry?.tool, entry?.outcome])).toEqual([
      ['http', 'search', 'POST /search', 'BAD_REQUEST'],
      ['http', 'open', 'GET /open', 'BAD_REQUEST'],
      ['http', 'bundle', 'POST /bundle', 'BAD_REQUEST'],
    ]);
    expect(refusals[2]!.args).toMatchObject({ prompt: 'alpha', colour: 'blue' });
    expect(audited.filter((entry) => ids.includes(entry.request_id))).toHaveLength(3); // one line each, not one more from the request log
  });
});
