import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { Json } from './team-server.js';

/**
 * A served OpenAPI 3.1 document as a judge of real traffic: which operation a request is, whether
 * a request is valid by the document, and whether an answer (its status, content type and body) is
 * one the document declares for it. Schemas are checked with Ajv in JSON Schema 2020-12 (what
 * OpenAPI 3.1 uses), strict: a schema Ajv cannot read exactly fails the test, never passes it.
 */

/** Where component schemas live for Ajv: `#/components/schemas/X` refers to `${BASE}X`. */
const BASE = 'https://repodex.invalid/components/schemas/';

/** A schema with every `#/components/schemas/` reference pointed at the component Ajv holds. */
function rebased(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rebased);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, key === '$ref' && typeof inner === 'string' ? inner.replace('#/components/schemas/', BASE) : rebased(inner)]));
}

/** One operation of the document. */
export interface Operation {
  readonly id: string;
  readonly method: string;
  readonly template: string;
  readonly spec: Json;
}

/** A real answer, as the test got it. */
export interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
}

export class ApiDocument {
  private readonly ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly routes: { regex: RegExp; operation: Operation }[] = [];

  constructor(readonly doc: Json) {
    for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) this.ajv.addSchema(rebased(schema) as object, `${BASE}${name}`);
    for (const [template, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      const regex = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+').replace(/\./g, '\\.')}$`);
      for (const [method, spec] of Object.entries(item)) this.routes.push({ regex, operation: { id: spec.operationId, method: method.toUpperCase(), template, spec } });
    }
  }

  /** Every operation the document declares. */
  operations(): Operation[] {
    return this.routes.map((route) => route.operation);
  }

  /** The operation a request is, or undefined when the document has none for it. */
  operation(method: string, url: string): Operation | undefined {
    const path = new URL(url, 'http://x').pathname;
    return this.routes.find((route) => route.operation.method === method && route.regex.test(path))?.operation;
  }

  /** Every schema, compiled (a schema Ajv refuses in strict mode throws here). */
  compileAll(): number {
    let count = 0;
    const visit = (value: unknown, pointer: string): void => {
      if (value === null || typeof value !== 'object') return;
      for (const [key, inner] of Object.entries(value)) {
        if (key === 'schema' && inner !== null && typeof inner === 'object') {
          this.validator(`${pointer}/schema`, inner);
          count++;
        } else visit(inner, `${pointer}/${key}`);
      }
    };
    visit(this.doc.paths, '#/paths');
    for (const name of Object.keys(this.doc.components?.schemas ?? {})) this.ajv.getSchema(`${BASE}${name}`);
    return count;
  }

  private validator(key: string, schema: unknown): ValidateFunction {
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(rebased(schema) as object);
      this.compiled.set(key, validate);
    }
    return validate;
  }

  private problems(key: string, schema: unknown, value: unknown): string[] {
    const validate = this.validator(key, schema);
    if (validate(value)) return [];
    return (validate.errors ?? []).slice(0, 8).map((error) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`);
  }

  /**
   * Why a request is not valid by the document (empty when it is): its query parameters (as the
   * server reads them: numbers and booleans from text) and its JSON body. Unknown query parameters
   * are not judged: OpenAPI cannot forbid them (the server refuses them, as a 400 it declares).
   */
  requestProblems(method: string, url: string, body: { json?: unknown; contentType?: string } = {}): string[] {
    const operation = this.operation(method, url);
    if (!operation) return [`no operation ${method} ${new URL(url, 'http://x').pathname}`];
    const problems: string[] = [];
    const query = new URL(url, 'http://x').searchParams;
    for (const parameter of (operation.spec.parameters ?? []) as Json[]) {
      if (parameter.in !== 'query') continue;
      const raw = query.get(parameter.name);
      if (raw === null) {
        if (parameter.required) problems.push(`query ${parameter.name}: required`);
        continue;
      }
      const type = parameter.schema.type;
      const value = type === 'integer' && /^-?\d+$/.test(raw) ? Number(raw) : type === 'boolean' && (raw === 'true' || raw === 'false') ? raw === 'true' : raw;
      problems.push(...this.problems(`${operation.id}/query/${parameter.name}`, parameter.schema, value).map((problem) => `query ${parameter.name}: ${problem}`));
    }
    const declared = operation.spec.requestBody?.content;
    if (declared) {
      if (!body.contentType || !declared[body.contentType]) problems.push(`body: content type ${body.contentType ?? 'none'} is not declared`);
      else problems.push(...this.problems(`${operation.id}/body`, declared[body.contentType].schema, body.json).map((problem) => `body: ${problem}`));
    }
    return problems;
  }

  /** Why an answer is not one the document declares for the request (empty when it is). */
  answerProblems(method: string, url: string, answer: Answer): string[] {
    const operation = this.operation(method, url);
    if (!operation) return [`no operation ${method} ${new URL(url, 'http://x').pathname}`];
    const declared = operation.spec.responses[String(answer.status)] ?? operation.spec.responses[`${String(answer.status)[0]}XX`] ?? operation.spec.responses.default;
    if (!declared) return [`${operation.id}: status ${answer.status} is not declared (declared: ${Object.keys(operation.spec.responses).join(', ')})`];
    const type = answer.contentType.split(';')[0]!.trim().toLowerCase();
    if (!declared.content) return answer.text === '' ? [] : [`${operation.id} ${answer.status}: a body (${type}) where the document declares none`];
    const media = declared.content[type];
    if (!media) return [`${operation.id} ${answer.status}: content type ${type || 'none'} is not declared (declared: ${Object.keys(declared.content).join(', ')})`];
    const key = `${operation.id}/${answer.status}/${type}`;
    if (type === 'text/event-stream') {
      // Each event's data is one JSON-RPC message.
      const messages = answer.text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .filter((data) => data !== '');
      return messages.flatMap((data) => this.problems(`${key}/event`, { $ref: '#/components/schemas/JsonRpcMessage' }, JSON.parse(data)).map((problem) => `${operation.id} ${answer.status} event: ${problem}`));
    }
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      return [`${operation.id} ${answer.status}: the body is not JSON: ${answer.text.slice(0, 200)}`];
    }
    return this.problems(key, media.schema, body).map((problem) => `${operation.id} ${answer.status}: ${problem}`);
  }
}
