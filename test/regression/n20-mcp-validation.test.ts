import { describe, expect, it } from 'vitest';
import { makeRepo } from '../helpers.js';
import { type McpReply, mcpLines } from './mcp-lines.js';

function repo(): string {
  return makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', 'src/zebra.ts': 'export function zebra() {\n  return 1;\n}\n' });
}

const call = (id: number, name: string, args: unknown): Record<string, unknown> => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

function byId(replies: readonly McpReply[], id: number | null): McpReply {
  const reply = replies.find((candidate) => candidate.id === id);
  if (!reply) throw new Error(`no reply with id ${String(id)} in ${JSON.stringify(replies)}`);
  return reply;
}

describe('N20: MCP answers in the words the CLI and JSONL use, and says what it capped', () => {
  it('N20: validation messages name the field in plain words, never raw validator text', () => {
    const replies = mcpLines(repo(), [
      call(1, 'repo.search', { query: '' }),
      call(2, 'repo.search', { query: 'zebra', top_k: 1.5 }),
      call(3, 'repo.open_file', { path: 'x'.repeat(5000) }),
      call(4, 'repo.list_files', { glob: '' }),
      call(5, 'repo.audit_log', { limit: 1e308 }),
    ]);
    const messages = [1, 2, 3, 4, 5].map((id) => byId(replies, id).result!.structuredContent!.error!.message);
    expect(messages).toEqual([
      'repo.search: query: must not be empty',
      'repo.search: top_k: must be a whole number, got 1.5',
      'repo.open_file: path: must be at most 4096 characters',
      'repo.list_files: glob: must not be empty',
      'repo.audit_log: limit: must be at most 1000',
    ]);
    for (const message of messages) expect(message).not.toMatch(/Too (small|big)|expected string|Invalid input/);
  });

  it('N20: top_k names the limit in force (no maximum: a larger one is taken) and a larger one is answered with a warning, 1e308 included', () => {
    const replies = mcpLines(repo(), [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }, call(2, 'repo.search', { query: 'zebra', top_k: 100 }), call(3, 'repo.search', { query: 'zebra', top_k: 1e308 })]);
    const search = byId(replies, 1).result!.tools!.find((tool) => tool.name === 'repo.search')!;
    const topK = (search.inputSchema.properties as Record<string, Record<string, unknown>>).top_k!;
    expect(topK).toMatchObject({ type: 'integer', minimum: 1 });
    expect(topK.maximum).toBeUndefined();
    expect(topK.description).toMatch(/^at most 20 here \(limits\.max_search_hits\)/);
    for (const id of [2, 3]) {
      const envelope = byId(replies, id).result!.structuredContent!;
      expect(envelope.ok).toBe(true);
      expect(envelope.warnings.join('\n')).toMatch(/a search returns at most 20 here \(limits\.max_search_hits/);
    }
    const raised = mcpLines(repo(), [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }], ['--max-search-hits', '50']);
    const listed = byId(raised, 1).result!.tools!.find((tool) => tool.name === 'repo.search')!;
    expect((listed.inputSchema.properties as Record<string, Record<string, unknown>>).top_k!.description).toMatch(/^at most 50 here/);
  });

  it('N20: a line that is not JSON gets a JSON-RPC -32700 parse error; JSON that is no message gets -32600', () => {
    const replies = mcpLines(repo(), ['this is not json', '{"hello":"world"}', call(7, 'repo.status', {})]);
    const errors = replies.filter((reply) => reply.id === null).map((reply) => reply.error!.code);
    expect(errors).toEqual([-32700, -32600]);
    expect(byId(replies, 7).result!.structuredContent!.ok).toBe(true);
  });
});
