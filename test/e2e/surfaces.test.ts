import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Op, OPS, flagOf, nameOn, opsOn, requestFields, withheldOn } from '../../src/protocol/index.js';
import { remoteRequest } from '../../src/frontends/cli/remote.js';
import { makeRepo, runCli } from '../helpers.js';
import { mcpLines } from '../regression/mcp-lines.js';
import { type Json, type TeamServer, startTeamServer } from '../team-server.js';

// Every front end's schema for an operation has the same fields: for each op of the op table and
// each surface that serves it, the fields the surface really offers — MCP's tools/list, the
// served /openapi.json, the CLI's --help, what JSONL takes, what the --repo client sends — are
// the op's request fields (its schema's, read apart from any surface), under the names the table
// gives them there, less only those the table withholds there with a reason.

const ALL = Object.keys(OPS) as Op[];

/** The op's request fields a surface should offer, under its names. */
function expected(surface: 'mcp' | 'http' | 'cli' | 'jsonl', op: Op): string[] {
  const withheld = withheldOn(surface, op);
  return requestFields(op)
    .filter((field) => !(field in withheld))
    .map((field) => nameOn(surface, op, field))
    .sort();
}

/** The property names of a JSON Schema object, nested objects' as dotted names. */
function propertyNames(schema: Json, prefix = ''): string[] {
  return Object.entries((schema.properties ?? {}) as Record<string, Json>).flatMap(([name, property]) =>
    property.type === 'object' && property.properties ? propertyNames(property, `${prefix}${name}.`) : [`${prefix}${name}`],
  );
}

let root: string;

beforeAll(() => {
  root = makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', 'a.ts': 'export const alpha = 1;\n' });
});

describe('the op table and every surface', () => {
  it('every withheld field says why, and no surface withholds a field the op does not have', () => {
    for (const op of ALL) {
      for (const surface of ['mcp', 'http'] as const) {
        for (const [field, why] of Object.entries(withheldOn(surface, op))) {
          expect(requestFields(op), `${op} on ${surface}`).toContain(field);
          expect(why.length, `${op}.${field} on ${surface}`).toBeGreaterThan(20);
        }
      }
    }
  });

  it('MCP tools/list: a tool per op the table serves there, each taking exactly its op’s fields', () => {
    const [listed] = mcpLines(root, [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }]);
    const tools = listed!.result!.tools!;
    expect(tools.map((tool) => tool.name).sort()).toEqual(opsOn('mcp').map((op) => OPS[op].mcp!.tool).sort());
    for (const op of opsOn('mcp')) {
      const tool = tools.find((candidate) => candidate.name === OPS[op].mcp!.tool)!;
      expect(propertyNames(tool.inputSchema).sort(), tool.name).toEqual(expected('mcp', op));
    }
    // What the table settles by name: the seed's argument names.
    const search = tools.find((tool) => tool.name === 'repo.search')!;
    expect(propertyNames(search.inputSchema).sort()).toEqual(['file_glob', 'lang', 'mode', 'query', 'top_k']);
    const bundle = tools.find((tool) => tool.name === 'repo.build_context_bundle')!;
    expect(propertyNames(bundle.inputSchema).sort()).toEqual(['budget.max_files', 'budget.max_total_lines', 'include_tests', 'prompt', 'strategy']);
  });

  describe('the team server', () => {
    let server: TeamServer;
    beforeAll(async () => {
      server = await startTeamServer([root]);
    });
    afterAll(async () => {
      await server?.stop();
    });

    it('/openapi.json: a route per op the table serves over HTTP, each taking exactly its op’s fields and repo_id', async () => {
      const doc = (await server.request('/openapi.json')).body as Json;
      for (const op of opsOn('http')) {
        const { method, path } = OPS[op].http!;
        const operation = doc.paths[path]?.[method.toLowerCase()] as Json;
        expect(operation, `${method} ${path}`).toBeDefined();
        const names = method === 'GET' ? (operation.parameters as { name: string }[]).map((parameter) => parameter.name) : propertyNames(operation.requestBody.content['application/json'].schema);
        expect(names.filter((name) => name !== 'repo_id').sort(), `${method} ${path}`).toEqual(expected('http', op));
        expect(names).toContain('repo_id');
      }
    });
  });

  it('the CLI: a command per op, its --help naming a flag or an argument for each of its op’s fields', () => {
    const main = runCli(['--help']).stdout;
    for (const op of ALL) {
      expect(main, op).toMatch(new RegExp(`^ {2}${op} {2,}`, 'm'));
      const help = runCli([op, '--help']);
      expect(help.code, op).toBe(0);
      const usage = help.stdout.split('\n')[0]!;
      for (const field of requestFields(op)) {
        const flag = flagOf(op, field);
        if (flag === undefined) expect(usage, `${op} ${field}`).toMatch(new RegExp(`^repodex ${op} \\S`));
        else expect(help.stdout, `${op} ${field}`).toMatch(new RegExp(`^ {2}${flag}\\b`, 'm'));
      }
      // Every flag the help lists is a field's, a presenter's own (--format), or one of the team-server client's.
      const listed = [...help.stdout.matchAll(/^ {2}(--[a-z-]+)/gm)].map((match) => match[1]!);
      const fields = requestFields(op).map((field) => flagOf(op, field)).filter((flag): flag is string => flag !== undefined);
      expect(listed.filter((flag) => !fields.includes(flag)), op).toEqual(op === 'bundle' ? ['--format'] : []);
    }
  });

  it('JSONL: the ops the table serves there, each taking every one of its op’s fields', () => {
    const lines = [{ op: 'no-such-op' }];
    const probes: { op: Op; field: string }[] = [];
    // A field a surface takes is refused by its own name for a wrong value; one it does not know is refused as unknown.
    const minimal: Record<string, unknown> = { q: 'alpha', ids: [1], path: 'a.ts', prompt: 'where is alpha' };
    for (const op of opsOn('jsonl')) {
      const required = Object.fromEntries(requestFields(op).filter((field) => field in minimal).map((field) => [field, minimal[field]]));
      for (const field of requestFields(op)) {
        probes.push({ op, field });
        lines.push({ op, ...required, [field]: { wrong: true } } as never);
      }
    }
    const input = Buffer.from(`${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    const answers = runCli(['serve', '--stdio', '--root', root], { input }).stdout.trim().split('\n').map((line) => JSON.parse(line) as { ok: boolean; error: string });
    expect(answers).toHaveLength(lines.length);
    expect(answers[0]!.error).toBe(`unknown op "no-such-op": expected one of ${opsOn('jsonl').join(', ')}`);
    expect(opsOn('jsonl')).toEqual(ALL.filter((op) => op !== 'init' && op !== 'clean'));
    probes.forEach(({ op, field }, i) => {
      const answer = answers[i + 1]!;
      expect(answer.ok, `${op}.${field}`).toBe(false);
      expect(answer.error, `${op}.${field}`).toMatch(new RegExp(`^bad request: ${field}: `));
    });
  });

  it('the --repo client: sends every field the route takes, under its names, and refuses one the server does not take', () => {
    const value = (field: string): unknown => (field === 'ids' ? [1, 2] : field.startsWith('include') || field === 'force' || field === 'blocked' ? true : field.endsWith('_line') || field.startsWith('max') || field === 'limit' || field === 'top_k' ? 3 : 'x');
    for (const op of opsOn('http')) {
      const taken = Object.fromEntries(requestFields(op).filter((field) => !(field in withheldOn('http', op))).map((field) => [field, value(field)]));
      const sent = remoteRequest(op, 'repo-1', { op, ...taken } as never);
      const names = sent.body ? Object.keys(sent.body) : [...new URL(sent.path, 'http://x').searchParams.keys()];
      expect(names.filter((name) => name !== 'repo_id').sort(), op).toEqual(expected('http', op));
      for (const field of Object.keys(withheldOn('http', op))) {
        expect(() => remoteRequest(op, 'repo-1', { op, [field]: value(field) } as never), `${op}.${field}`).toThrow(/runs here only, not on a server/);
      }
    }
  });
});
