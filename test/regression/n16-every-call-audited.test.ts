import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';
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
});
