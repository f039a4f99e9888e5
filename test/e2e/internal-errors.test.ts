import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { makeRepo, runCli, tempDir } from '../helpers.js';
import { startTeamServer } from '../team-server.js';

/** A stack frame, or any trace of one: what no user-facing line may hold. */
const STACK = /^\s+at |\n\s+at /m;

/** The one line every front end gives for a bug: the message, and the log holding the stack. */
const BUG = /internal error: a fault injected at request \(REPODEX_FAULT_AT\) \(a bug in repodex: details in (\S+errors\.log); please report it with them\)/;

function repository(): string {
  return makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', 'src/a.ts': 'export function alpha(): number {\n  return 1;\n}\n' });
}

/** A state folder of its own (the error log goes under it), and the fault that makes every request fail as a bug would. */
function faulty(): { env: NodeJS.ProcessEnv; log: string } {
  const state = tempDir();
  return { env: { XDG_STATE_HOME: state, REPODEX_FAULT_AT: 'request' }, log: join(state, 'repodex', 'errors.log') };
}

/** The stack is in the log, with what was being done. */
function expectLogged(log: string, what: RegExp): void {
  const text = readFileSync(log, 'utf8');
  expect(text).toMatch(what);
  expect(text).toMatch(/Error: a fault injected at request/);
  expect(text).toMatch(/\n\s+at /);
}

describe('no stack trace reaches a user: a bug is one line naming the log that holds its stack', () => {
  it('the CLI: one line on stderr, exit 2; --json says the same on stdout', () => {
    const root = repository();
    const { env, log } = faulty();
    const run = runCli(['search', 'alpha', '--root', root], { env });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).not.toMatch(STACK);
    expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(run.stderr).toMatch(new RegExp(`^repodex: ${BUG.source}\\n$`));
    expect(BUG.exec(run.stderr)![1]).toBe(log);
    expectLogged(log, /repodex search in /);

    const json = runCli(['status', '--root', root, '--json'], { env });
    expect(json.code).toBe(2);
    expect(json.json<{ ok: boolean; code: string; error: string }>()).toMatchObject({ ok: false, code: 'INTERNAL' });
    expect(json.json<{ error: string }>().error).toMatch(BUG);
  });

  it('the CLI: when the log cannot be written either, it says so, still in one line', () => {
    const root = repository();
    const blocked = join(tempDir(), 'a-file');
    writeFileSync(blocked, '');
    // The state folder is a file, and so is the fallback under the temp folder's place.
    const run = runCli(['search', 'alpha', '--root', root], { env: { XDG_STATE_HOME: blocked, TMPDIR: blocked, REPODEX_FAULT_AT: 'request' } });
    expect(run.code).toBe(2);
    expect(run.stderr).not.toMatch(STACK);
    expect(run.stderr).toMatch(/^repodex: internal error: a fault injected at request \(REPODEX_FAULT_AT\) \(a bug in repodex: its details could not be logged: [^\n]+; please report it with them\)\n$/);
  });

  it('serve --stdio: the request gets an INTERNAL answer naming the log; the server logs one line and goes on', () => {
    const root = repository();
    const { env, log } = faulty();
    const input = `${JSON.stringify({ op: 'search', q: 'alpha', id: 1 })}\n${JSON.stringify({ op: 'nosuch', id: 2 })}\n`;
    const run = runCli(['serve', '--stdio', '--root', root], { env, input });
    expect(run.code).toBe(0);
    const [first, second] = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { ok: boolean; code: string; error: string; id: number });
    expect(first).toMatchObject({ ok: false, code: 'INTERNAL', id: 1 });
    expect(first!.error).toMatch(BUG);
    expect(second).toMatchObject({ ok: false, code: 'BAD_REQUEST', id: 2 });
    expect(run.stderr).not.toMatch(STACK);
    expect(run.stderr.split('\n').filter((line) => line.includes('failed'))).toEqual([expect.stringMatching(new RegExp(`^repodex: search failed: ${BUG.source}$`))]);
    expectLogged(log, /serve --stdio: search in /);
  });

  it('serve --mcp: the tool call answers INTERNAL naming the log; the server logs one line', () => {
    const root = repository();
    const { env, log } = faulty();
    const lines = [
      { jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'repodex-test', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'repo.search', arguments: { query: 'alpha' } } },
    ];
    const run = runCli(['serve', '--mcp', '--root', root], { env, input: `${lines.map((line) => JSON.stringify(line)).join('\n')}\n` });
    const reply = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: unknown; result?: { structuredContent?: { ok: boolean; error?: { code: string; message: string } } } })
      .find((message) => message.id === 1)!;
    expect(reply.result?.structuredContent).toMatchObject({ ok: false, error: { code: 'INTERNAL' } });
    expect(reply.result!.structuredContent!.error!.message).toMatch(BUG);
    expect(run.stderr).not.toMatch(STACK);
    expect(run.stderr).toMatch(new RegExp(`^repodex: repo\\.search failed: ${BUG.source}$`, 'm'));
    expectLogged(log, /MCP repo\.search in /);
  });

  it('serve --http: the request gets a 500 naming the log; the server logs one JSON line without the stack, and keeps serving', async () => {
    const root = repository();
    const { env, log } = faulty();
    const server = await startTeamServer([root], { env });
    try {
      const repoId = (await server.request('/repos')).body.repos[0].repo_id as string;
      const failed = await server.request('/search', { body: { repo_id: repoId, query: 'alpha' } });
      expect(failed.status).toBe(500);
      expect(failed.body).toMatchObject({ ok: false, code: 'INTERNAL' });
      expect(failed.body.error).toMatch(BUG);
      expect((await server.request('/health')).status).toBeLessThan(500);
      // The server writes its log lines a turn of its event loop after the answer: wait for the line.
      const logged = (): string[] => server.stderr().split('\n').filter((line) => line.includes('"level":"error"') && line.includes('internal error'));
      await vi.waitFor(() => expect(logged().length).toBeGreaterThan(0), { timeout: 10_000 });
      const lines = logged();
      for (const line of lines) expect((JSON.parse(line) as { error: string }).error).toMatch(BUG);
      expect(server.stderr()).not.toMatch(STACK);
      expect(existsSync(log)).toBe(true);
      expectLogged(log, /serve --http: POST \/search/);
    } finally {
      await server.stop();
    }
  });
});
