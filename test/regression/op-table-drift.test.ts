import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';
import { mcpLines } from './mcp-lines.js';

// What the per-front-end copies of an operation had let drift apart, now that every front end is
// generated from one op table: MCP's search had no lang; the bundle took strategy "hybrid" on MCP
// only and answered deterministically without a word; sync --embeddings with --repo was dropped.

function repo(): string {
  return makeRepo({
    '.git/HEAD': 'ref: refs/heads/main\n',
    'src/retry.ts': 'export function retryRequest(attempts: number): number {\n  return attempts;\n}\n',
    'tools/retry.py': 'def retry_request(attempts):\n    return attempts\n',
  });
}

const call = (id: number, name: string, args: Record<string, unknown>): Record<string, unknown> => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

interface Envelope {
  ok: boolean;
  warnings: string[];
  result: { results?: { path: string }[]; strategy?: string } | null;
  error?: { message: string };
}

describe('the op table removes the drift between front ends', () => {
  it('MCP repo.search takes lang, as the CLI, JSONL and HTTP do', () => {
    const root = repo();
    const replies = mcpLines(root, [call(1, 'repo.search', { query: 'retry request', lang: 'python' }), call(2, 'repo.search', { query: 'retry request', lang: 'cobol' })]);
    const [python, unknown] = [1, 2].map((id) => replies.find((reply) => reply.id === id)!.result!.structuredContent as unknown as Envelope);
    expect(python!.ok).toBe(true);
    expect(python!.result!.results!.map((hit) => hit.path)).toEqual(['tools/retry.py']);
    expect(unknown!.ok).toBe(false);
    expect(unknown!.error!.message).toMatch(/^repo\.search: lang: expected one of /);
    const cli = runCli(['search', 'retry request', '--lang', 'python', '--json', '--root', root]).json<{ results: { path: string }[] }>();
    expect(cli.results.map((hit) => hit.path)).toEqual(['tools/retry.py']);
  });

  it('a bundle asked for strategy hybrid says in warnings that it was made deterministically, on every front end; deterministic is answered without a word', () => {
    const root = repo();
    const replies = mcpLines(root, [call(1, 'repo.build_context_bundle', { prompt: 'retry a request', strategy: 'hybrid' }), call(2, 'repo.build_context_bundle', { prompt: 'retry a request', strategy: 'deterministic' })]);
    const [hybrid, deterministic] = [1, 2].map((id) => replies.find((reply) => reply.id === id)!.result!.structuredContent as unknown as Envelope);
    const said = /strategy hybrid is not built: this bundle was made by deterministic-v1/;
    expect(hybrid!.ok).toBe(true);
    expect(hybrid!.result!.strategy).toBe('deterministic-v1');
    expect(hybrid!.warnings.join('\n')).toMatch(said);
    expect(deterministic!.warnings.join('\n')).not.toMatch(/strategy/);
    const cli = runCli(['bundle', 'retry a request', '--strategy', 'hybrid', '--json', '--root', root]).json<{ warnings: string[] }>();
    expect(cli.warnings.join('\n')).toMatch(said);
    const jsonl = runCli(['serve', '--stdio', '--root', root], { input: `${JSON.stringify({ op: 'bundle', prompt: 'retry a request', strategy: 'hybrid' })}\n` });
    expect((JSON.parse(jsonl.stdout) as { data: { warnings: string[] } }).data.warnings.join('\n')).toMatch(said);
    const refused = runCli(['bundle', 'retry a request', '--strategy', 'clever', '--root', root]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--strategy expected one of "deterministic", "hybrid"');
  });

  it('a field a team server does not take is refused by --repo, not dropped', () => {
    const run = runCli(['sync', '--embeddings', 'builtin', '--repo', 'any', '--server', 'http://127.0.0.1:9']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/--embeddings runs here only, not on a server \(switching the embedder rewrites/);
  });
});
