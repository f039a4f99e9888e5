import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, makeRepo } from '../helpers.js';

// The MCP tools' input schemas say exactly what the tools take: each compiles under Ajv in strict
// mode (draft-07, what MCP clients validate with), and arguments at and past every bound a schema
// declares — and of every wrong type, unknown field and missing field — are taken by the tool
// exactly when the schema says they are valid. A client that checks its arguments first never
// refuses a call the server would take, nor sends one it would refuse.

type Schema = { type?: string; properties?: Record<string, Schema>; required?: string[]; minimum?: number; maximum?: number; minLength?: number; maxLength?: number; pattern?: string; enum?: unknown[]; description?: string };
type Args = Record<string, unknown>;

/** A value a property takes, by its name where the name says what it must be (a path that exists, a time). */
const SAMPLES: Readonly<Record<string, unknown>> = { path: 'src/alpha.ts', query: 'alpha', prompt: 'where is alpha computed', glob: 'src/**', file_glob: 'src/**', since: '1h' };

function sample(name: string, schema: Schema): unknown {
  if (name in SAMPLES) return SAMPLES[name];
  if (schema.enum) return schema.enum[0];
  switch (schema.type) {
    case 'integer':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'object':
      return {};
    default:
      return 'x';
  }
}

/** The smallest valid arguments: every required property with a sample. */
function base(schema: Schema): Args {
  return Object.fromEntries((schema.required ?? []).map((name) => [name, sample(name, schema.properties![name]!)]));
}

/** A string of `length` characters that starts like the sample (so a path stays a path). */
const stringOf = (length: number): string => 'x'.repeat(length);

/** Arguments at and past each bound of one property, wrong types, and what the enum and pattern refuse. */
function probes(name: string, schema: Schema): { label: string; value: unknown }[] {
  const out: { label: string; value: unknown }[] = [];
  switch (schema.type) {
    case 'integer': {
      const min = schema.minimum ?? 0;
      out.push({ label: 'minimum', value: min }, { label: 'below minimum', value: min - 1 }, { label: 'not whole', value: min + 0.5 }, { label: 'as text', value: String(min) });
      if (schema.maximum !== undefined) out.push({ label: 'maximum', value: schema.maximum }, { label: 'above maximum', value: schema.maximum + 1 });
      else out.push({ label: 'large (no maximum)', value: 1_000_000 }, { label: '1e308 (no maximum)', value: 1e308 });
      break;
    }
    case 'string':
      if (schema.enum) {
        for (const value of schema.enum) out.push({ label: `enum ${String(value)}`, value });
        out.push({ label: 'not in enum', value: 'not-a-choice' });
        break;
      }
      if (schema.minLength !== undefined) out.push({ label: 'minLength', value: name in SAMPLES && schema.minLength <= 1 ? (SAMPLES[name] as string).slice(0, Math.max(1, schema.minLength)) : stringOf(schema.minLength) });
      if (schema.minLength !== undefined && schema.minLength > 0) out.push({ label: 'below minLength', value: stringOf(schema.minLength - 1) });
      if (schema.maxLength !== undefined) out.push({ label: 'maxLength', value: stringOf(schema.maxLength) }, { label: 'above maxLength', value: stringOf(schema.maxLength + 1) });
      if (schema.pattern !== undefined) out.push({ label: 'blank', value: '   ' }, { label: 'empty', value: '' });
      out.push({ label: 'a number', value: 5 });
      break;
    case 'boolean':
      out.push({ label: 'true', value: true }, { label: 'false', value: false }, { label: 'as text', value: 'yes' });
      break;
    case 'object':
      out.push({ label: 'empty', value: {} }, { label: 'an array', value: [] }, { label: 'unknown field', value: { extra: 1 } });
      break;
  }
  return out;
}

interface Envelope {
  ok: boolean;
  warnings: string[];
  error?: { code: string; message: string };
}

describe('MCP tool input schemas against what the tools take', () => {
  let client: Client;
  let root: string;

  beforeAll(async () => {
    root = makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', 'src/alpha.ts': 'export function alpha(value: number): number {\n  return value * 2;\n}\n', 'src/alpha.test.ts': "import { alpha } from './alpha';\n\ntest('alpha', () => alpha(1));\n" });
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', '--mcp', '--root', root], stderr: 'pipe', env: { ...process.env, NO_COLOR: '1', NODE_EXTRA_CA_CERTS: '' } as Record<string, string> });
    client = new Client({ name: 'schema-test', version: '1.0.0' });
    await client.connect(transport);
  });

  afterAll(async () => {
    await client?.close();
  });

  async function call(name: string, args: Args): Promise<Envelope> {
    const result = await client.callTool({ name, arguments: args });
    return result.structuredContent as unknown as Envelope;
  }

  it('every input and output schema compiles under Ajv strict', async () => {
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(8);
    const ajv = new Ajv({ strict: true, allowUnionTypes: true });
    for (const tool of tools) {
      expect(() => ajv.compile(tool.inputSchema), `${tool.name} input`).not.toThrow();
      expect(() => ajv.compile(tool.outputSchema!), `${tool.name} output`).not.toThrow();
    }
  });

  it('takes a call exactly when its input schema says it is valid, at and past every bound', async () => {
    const { tools } = await client.listTools();
    const ajv = new Ajv({ strict: true, allowUnionTypes: true });
    const disagreements: string[] = [];
    let calls = 0;
    let documented = 0;
    const check = async (tool: string, validate: (args: Args) => boolean, label: string, args: Args, property?: Schema): Promise<Envelope> => {
      const valid = validate(args);
      const envelope = await call(tool, args);
      calls++;
      const taken = envelope.error?.code !== 'BAD_REQUEST';
      // What depends on the file, not on the arguments' shape, the argument's description says (a start line past the end).
      if (valid && !taken && /past the end of the file is refused/.test(property?.description ?? '') && /is past the end of/.test(envelope.error!.message)) {
        documented++;
        return envelope;
      }
      if (valid !== taken) disagreements.push(`${tool} ${label}: the schema says ${valid ? 'valid' : 'invalid'}, the tool ${taken ? 'took it' : `refused it (${envelope.error?.message})`}`);
      return envelope;
    };
    for (const tool of tools) {
      const schema = tool.inputSchema as Schema;
      const validate = ajv.compile(schema);
      const minimal = base(schema);
      await check(tool.name, validate, 'the required arguments', minimal);
      await check(tool.name, validate, 'an unknown argument', { ...minimal, colour: 'blue' });
      for (const required of schema.required ?? []) {
        const { [required]: _left, ...without } = minimal;
        await check(tool.name, validate, `without ${required}`, without);
      }
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        for (const probe of probes(name, property)) await check(tool.name, validate, `${name} ${probe.label}`, { ...minimal, [name]: probe.value }, property);
        // A nested object's own properties, each probed inside it.
        for (const [inner, innerSchema] of Object.entries(property.properties ?? {})) {
          for (const probe of probes(inner, innerSchema)) await check(tool.name, validate, `${name}.${inner} ${probe.label}`, { ...minimal, [name]: { [inner]: probe.value } }, innerSchema);
        }
      }
    }
    expect(disagreements).toEqual([]);
    expect(calls).toBeGreaterThan(100);
    expect(documented).toBe(2); // open_file's start_line of 1000000 and 1e308, in a file of 3 lines
  });

  it('answers a value past a server limit with that many and a warning, as the schema describes', async () => {
    const { tools } = await client.listTools();
    const search = tools.find((tool) => tool.name === 'repo.search')!;
    const topK = (search.inputSchema.properties as Record<string, Schema>).top_k!;
    expect(topK.maximum).toBeUndefined();
    expect(topK.description).toMatch(/^at most 20 here \(limits\.max_search_hits\)/);
    const searched = await call('repo.search', { query: 'alpha', top_k: 50 });
    expect(searched.ok).toBe(true);
    expect(searched.warnings.join('\n')).toContain('asked for 50 results; a search returns at most 20 here');
    const bundle = tools.find((tool) => tool.name === 'repo.build_context_bundle')!;
    const maxFiles = ((bundle.inputSchema.properties as Record<string, Schema>).budget!.properties as Record<string, Schema>).max_files!;
    expect(maxFiles.maximum).toBeUndefined();
    expect(maxFiles.description).toMatch(/^at most 8 here \(limits\.max_bundle_files\)/);
    const bundled = await call('repo.build_context_bundle', { prompt: 'where is alpha computed', budget: { max_files: 99 } });
    expect(bundled.ok).toBe(true);
    expect(bundled.warnings.join('\n')).toContain('asked for 99 files; a bundle cites at most 8 here');
  });
});
