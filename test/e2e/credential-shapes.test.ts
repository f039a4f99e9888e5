import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testBackends } from '../conformance/backends.js';
import {
  BARE_TOKENS,
  LANGUAGES,
  type Language,
  constantIn,
  djangoSecretKey,
  fileFor,
  keyEncodings,
  keyIn,
  pemLines,
  privateKey,
  splitToken,
  urlWithPassword,
} from '../credential-shapes.js';
import { TOKEN_SHAPES, randomOf } from '../credentials.js';
import { JsonlSession } from '../jsonl-session.js';
import { CLI, committedRepo, git, runCli, tempDir } from '../helpers.js';
import { type Json, type TeamServer, startTeamServer, withToken } from '../team-server.js';

/**
 * Credentials by shape (README "Safe by default"), end to end: every family the detectors claim —
 * passwords in URLs of any scheme, private keys in every encoding and with their markers built
 * from pieces, PuTTY, OpenSSH and OpenPGP keys, tokens without their keyword, a token split over
 * a constant, secrets assigned with any characters, names shaped like a credential — each in
 * three languages or more, generated at test time. After a sync, no byte of any of them may
 * appear in an answer of the CLI (search, fetch, open, outline, files, bundle), JSONL, MCP over
 * stdio (the SDK's client), the HTTP API or MCP over HTTP, in any file under `.repodex/` or the
 * server's data folder, or in any column of any repodex table of a real PostgreSQL. And what is
 * withheld is listed, with why, by `files --blocked` on every channel.
 */

/** A planted credential: the file, the family, what must never be seen, and a word a search finds beside it. */
interface Planted {
  readonly path: string;
  readonly shape: string;
  readonly secrets: readonly string[];
  readonly word: string;
  /** `content`: withheld for a credential in its text; `name`: for a name shaped like a credential. */
  readonly by: 'content' | 'name';
}

/** Distinct made-up words, one per planted file: searching for one would find its file if it were indexed. */
const usedWords = new Set(['okapi', 'wombat']);
const nextWord = (): string => {
  for (;;) {
    const word = Array.from({ length: 4 }, () => `${randomOf('bdfgklmnprstvz', 1)}${randomOf('aeiou', 1)}`).join('');
    if (!usedWords.has(word)) {
      usedWords.add(word);
      return word;
    }
  }
};

const planted: Planted[] = [];
const files: Record<string, string> = {};
/** A word in files that hold no credential: a search for it must find them (nothing is withheld by mistake). */
const VISIBLE = { control: 'src/control.ts', placeholders: 'docs/connect.md' };

function plant(path: string, text: string, shape: string, secrets: readonly string[], word: string, by: 'content' | 'name' = 'content'): void {
  if (files[path] !== undefined) throw new Error(`planted twice: ${path}`);
  files[path] = text;
  planted.push({ path, shape, secrets, word, by });
}

/** Languages for the `turn`th shape: three of LANGUAGES, a different three each time. */
function languagesFor(turn: number, count = 3): Language[] {
  return Array.from({ length: count }, (_, i) => LANGUAGES[(turn * count + i) % LANGUAGES.length]!);
}

function buildCorpus(): void {
  let turn = 0;
  // Passwords in URLs whatever the scheme.
  for (const scheme of ['redis', 'amqp', 'mqtt', 'ldap', 'nats']) {
    for (const language of languagesFor(turn++)) {
      const { value, secret } = urlWithPassword(scheme);
      const word = nextWord();
      plant(fileFor(language, word), constantIn(language, word, value), `url-password:${scheme}`, [secret], word);
    }
  }
  // Tokens whose own shape says what they are, under names that say nothing.
  for (const [shape, make] of Object.entries(BARE_TOKENS)) {
    for (const language of languagesFor(turn++)) {
      const value = make();
      const word = nextWord();
      plant(fileFor(language, word), constantIn(language, word, value), `bare:${shape}`, [value.slice(-24)], word);
    }
  }
  // A GitHub token split over a constant and a value that names it, in every language.
  for (const language of LANGUAGES) {
    const token = TOKEN_SHAPES['github-classic']();
    const word = nextWord();
    plant(fileFor(language, word), splitToken(language, word, token), 'split-token', [token.slice(14)], word);
  }
  // Django's SECRET_KEY and secrets assigned with any characters.
  for (const [extension, write] of [
    ['py', (key: string) => `SECRET_KEY = '${key}'\nDEBUG = False\n`],
    ['js', (key: string) => `module.exports = { session: { secret: '${key}' } };\n`],
    ['rb', (key: string) => `Rails.application.config.secret_key_base = '${key}'\n`],
    ['yaml', (key: string) => `spring:\n  datasource:\n    password: ${key.replace(/[()]/g, '')}\n`],
  ] as const) {
    const key = djangoSecretKey();
    const word = nextWord();
    plant(`config/${word}.${extension}`, `${extension === 'js' ? '//' : '#'} ${word} settings\n${write(key)}`, 'secret-assignment', [key.replace(/[()]/g, '').slice(0, 30)], word);
  }
  // Private keys: a PEM with its markers built from a constant, in six languages.
  for (const language of ['ts', 'py', 'go', 'cs', 'rb', 'php'] as const) {
    const lines = pemLines(privateKey(language === 'go' ? 'ec' : 'rsa'));
    const word = nextWord();
    plant(fileFor(language, word, 'keys'), keyIn(language, lines, word, true), 'pem-built-marker', lines.slice(1, 4), word);
  }
  // Private keys in every encoding: multi-line forms in three languages (and Markdown, YAML,
  // TOML, JSON), one-line forms as string constants in three.
  for (const { name, lines, secrets } of keyEncodings()) {
    if (lines.length > 1) {
      for (const language of [...languagesFor(turn++), ...(name === 'putty' ? (['md', 'yaml'] as const) : [])]) {
        const word = nextWord();
        const path = language === 'md' || language === 'yaml' ? `docs/${word}.${language}` : fileFor(language, word, 'keys');
        plant(path, keyIn(language, lines, word), `key:${name}`, secrets, word);
      }
    } else if (!name.endsWith('-bytes') && name !== 'der-escapes') {
      for (const language of languagesFor(turn++)) {
        const word = nextWord();
        plant(fileFor(language, word, 'keys'), constantIn(language, word, lines[0]!, name === 'jwk' ? "'" : '"'), `key:${name}`, secrets, word);
      }
    }
  }
  // Keys as byte literals and escapes, each as its languages write them.
  const encodings = new Map(keyEncodings().map((encoding) => [encoding.name, encoding]));
  const cBytes = encodings.get('der-c-bytes')!;
  const javaBytes = encodings.get('der-java-bytes')!;
  const escapes = encodings.get('der-escapes')!;
  for (const [path, text, encoding] of [
    ['native/{w}.c', (w: string) => `/* ${w} */\nstatic const unsigned char ${w}_key[] = ${cBytes.lines[0]};\n`, cBytes],
    ['native/{w}.go', (w: string) => `// ${w}\npackage k\n\nvar ${w}Key = []byte${cBytes.lines[0]}\n`, cBytes],
    ['native/{w}.cs', (w: string) => `// ${w}\nclass K { static readonly byte[] ${w}Key = new byte[] ${cBytes.lines[0]}; }\n`, cBytes],
    ['native/{w}.java', (w: string) => `// ${w}\nclass K { static final byte[] KEY = new byte[] ${javaBytes.lines[0]}; }\n`, javaBytes],
    ['native/{w}.py', (w: string) => `# ${w}\nKEY = b"${escapes.lines[0]}"\n`, escapes],
    ['native/{w}.rb', (w: string) => `# ${w}\nKEY = "${escapes.lines[0]}"\n`, escapes],
    ['native/{w}.cpp', (w: string) => `// ${w}\nconst char *key = "${escapes.lines[0]}";\n`, escapes],
  ] as const) {
    const word = nextWord();
    plant(path.replace('{w}', word), text(word), `key:${encoding.name}`, encoding.secrets, word);
  }
  // Names shaped like a credential: files and a folder.
  for (const [shape, dir, name] of [
    ['github-pat', 'tokens', `${TOKEN_SHAPES['github-classic']()}.ts`],
    ['npm', 'keys', `${TOKEN_SHAPES.npm()}.py`],
    ['aws', 'creds', `${TOKEN_SHAPES['aws-key-id']()}.java`],
    ['stripe-folder', TOKEN_SHAPES.stripe(), 'config.go'],
  ] as const) {
    const word = nextWord();
    const token = shape === 'stripe-folder' ? dir : name.slice(0, name.lastIndexOf('.'));
    plant(`${dir}/${name}`, `// ${word} module\nexport const ${word} = 1;\n`, `name:${shape}`, [token], word, 'name');
  }
  // What must stay visible: code that holds none, and documentation with placeholders.
  files[VISIBLE.control] = '// okapi control\nexport const controlValue = "visible";\n';
  files[VISIBLE.placeholders] =
    '# wombat connection strings\n\nredis://user:${PASSWORD}@localhost:6379, amqp://guest:guest@localhost:5672, mqtt://user:<password>@broker,\nldap://admin:$PASS@ldap, smtp://user:***@mail, sftp://user:xxx@host, https://user:pass@example.com\n';
}

/** Every byte a channel answered, with the credential the request itself carried (echoed to its own caller), if any. */
const answers: { channel: string; text: string; carried?: string }[] = [];
const answer = (channel: string, text: string, carried?: string): void => {
  answers.push(carried === undefined ? { channel, text } : { channel, text, carried });
};
/** The `files --blocked` listings each channel gave. */
const blockedListings: { channel: string; files: Json[] }[] = [];
/** Paths each channel's searches found. */
const found = new Map<string, Set<string>>();
const foundBy = (channel: string): Set<string> => found.get(channel) ?? found.set(channel, new Set()).get(channel)!;

let root = '';
let subjectToken = '';
const pastedKey = pemLines(privateKey('rsa'));
const pastedToken = TOKEN_SHAPES['github-classic']();
const pasted = `request failed: 401 Bearer ${pastedToken} and this key ${pastedKey.join('\n')}`;

/** Every file under a folder, with its bytes as latin1 text. */
function filesUnder(dir: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push({ path, text: readFileSync(path, 'latin1') });
  }
  return out;
}

/** The credentials that must never be seen, with where they were planted. */
function allSecrets(): { where: string; secret: string }[] {
  return [
    ...planted.flatMap((item) => item.secrets.map((secret) => ({ where: `${item.shape} in ${item.path.replace(/[A-Za-z0-9_]{20,}/g, '…')}`, secret }))),
    { where: 'commit subject', secret: subjectToken },
    ...[pastedToken, ...pastedKey.slice(1, 4)].map((secret) => ({ where: 'pasted into a query', secret })),
  ];
}

/** Where any credential (or its lower-cased form) appears in `texts`; the caller's own pasted query repeated to it does not count. */
function leaks(texts: readonly { where: string; text: string; carried?: string }[]): string[] {
  const out: string[] = [];
  for (const { where: planted, secret } of allSecrets()) {
    for (const form of new Set([secret, secret.toLowerCase()])) {
      for (const { where, text, carried } of texts) {
        if (carried !== undefined && carried.includes(secret)) continue;
        if (text.includes(form)) out.push(`${planted}: ${form.slice(0, 10)}… in ${where}`);
      }
    }
  }
  return out;
}

/**
 * What a request for a planted file carries of a credential: a file named like one is asked for
 * by that name, and a refusal repeats the request's path to its caller (as a search repeats its
 * query); the audit log keeps it redacted all the same.
 */
function echoed(item: Planted): string | undefined {
  return item.by === 'name' ? item.path : undefined;
}

/** Record a search answer's hit paths for `channel`. */
function noteHits(channel: string, results: Json[] | undefined): number[] {
  for (const hit of results ?? []) foundBy(channel).add(hit.path);
  return (results ?? []).map((hit) => hit.chunk_id as number);
}

/** Word groups: a search for several words at once, as an agent asks. */
function wordGroups(): string[][] {
  const words = [...planted.map((item) => item.word), 'okapi', 'wombat'];
  const groups: string[][] = [];
  for (let i = 0; i < words.length; i += 8) groups.push(words.slice(i, i + 8));
  return groups;
}

/** The MCP tools every MCP channel is asked: searches, opens, outlines, both listings, a bundle, the audit log. */
async function askMcp(channel: string, call: (name: string, args: Record<string, unknown>) => Promise<Json>): Promise<void> {
  const record = async (name: string, args: Record<string, unknown>, carried?: string): Promise<Json> => {
    const result = await call(name, args);
    answer(channel, JSON.stringify(result), carried);
    return result.structuredContent;
  };
  for (const group of wordGroups()) noteHits(channel, (await record('repo.search', { query: group.join(' '), top_k: 20 })).result?.results);
  for (const item of planted) {
    await record('repo.open_file', { path: item.path }, echoed(item));
    await record('repo.outline', { path: item.path }, echoed(item));
  }
  await record('repo.list_files', { max_results: 1000, include_hidden: true });
  blockedListings.push({ channel, files: (await record('repo.list_files', { max_results: 1000, blocked: true })).result.files });
  await record('repo.build_context_bundle', { prompt: `review the ${planted.slice(0, 20).map((item) => item.word).join(' ')} settings` });
  await record('repo.search', { query: pasted }, pasted);
  await record('repo.build_context_bundle', { prompt: pasted }, pasted);
  await record('repo.audit_log', { limit: 1000 });
}

beforeAll(async () => {
  buildCorpus();
  root = committedRepo(files);
  subjectToken = TOKEN_SHAPES['github-classic']();
  writeFileSync(join(root, VISIBLE.control), `${files[VISIBLE.control]}export const rotated = true;\n`);
  git(root, 'commit', '-q', '-am', `rotate CI token ${subjectToken}`);
  const sync = runCli(['sync', '--root', root]);
  expect(sync.code, sync.stderr).toBe(0);

  // CLI: searches and fetches of what they found, open and outline of every planted file, both listings, bundles.
  const cli = (args: string[], carried?: string): string => {
    const run = runCli([...args, '--root', root], { cwd: root });
    answer('cli', run.stdout + run.stderr, carried);
    return run.stdout;
  };
  for (const group of wordGroups()) {
    const ids = noteHits('cli', (JSON.parse(cli(['search', group.join(' '), '--json', '--top-k', '20'])) as Json).results);
    for (let at = 0; at < ids.length; at += 5) cli(['fetch', '--ids', ids.slice(at, at + 5).join(',')]);
  }
  for (const item of planted.filter((entry, i) => i % 3 === 0 || entry.by === 'name')) {
    cli(['open', item.path], echoed(item));
    cli(['outline', item.path], echoed(item));
  }
  cli(['files', '--include-hidden']);
  blockedListings.push({ channel: 'cli', files: (JSON.parse(cli(['files', '--blocked', '--json'])) as Json).files });
  cli(['files', '--blocked']);
  cli(['bundle', `update the ${planted.slice(0, 16).map((item) => item.word).join(' ')} handling`]);
  cli(['bundle', pasted], pasted);
  cli(['search', pasted], pasted);

  // JSONL: every op.
  const session = new JsonlSession(root, { REPODEX_DAEMON: '0' });
  try {
    let id = 0;
    const ask = async (body: Record<string, unknown>, carried?: string): Promise<Json> => {
      const line = await session.request({ id: ++id, ...body });
      answer('jsonl', line, carried);
      return (JSON.parse(line) as Json).data;
    };
    for (const group of wordGroups()) {
      const ids = noteHits('jsonl', (await ask({ op: 'search', q: group.join(' '), top_k: 20 }))?.results);
      for (let at = 0; at < ids.length; at += 5) await ask({ op: 'fetch', ids: ids.slice(at, at + 5) });
    }
    for (const item of planted) {
      await ask({ op: 'open', path: item.path }, echoed(item));
      await ask({ op: 'outline', path: item.path }, echoed(item));
    }
    await ask({ op: 'files', include_hidden: true, limit: 1000 });
    blockedListings.push({ channel: 'jsonl', files: (await ask({ op: 'files', blocked: true, limit: 1000 })).files });
    await ask({ op: 'bundle', prompt: `fix the ${planted.slice(16, 40).map((item) => item.word).join(' ')} settings` });
    await ask({ op: 'search', q: pasted }, pasted);
    await ask({ op: 'bundle', prompt: pasted }, pasted);
    await ask({ op: 'audit', limit: 1000 });
  } finally {
    await session.close();
  }

  // MCP over stdio, through the SDK's client.
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', '--mcp', '--root', root], stderr: 'pipe', env: { ...process.env, NO_COLOR: '1', REPODEX_DAEMON: '0' } as Record<string, string> });
  const mcp = new Client({ name: 'repodex-credential-shapes', version: '1.0.0' });
  await mcp.connect(transport);
  try {
    await askMcp('mcp-stdio', (name, args) => mcp.callTool({ name, arguments: args }) as Promise<Json>);
  } finally {
    await mcp.close();
  }
}, 600_000);

afterAll(() => {
  planted.length = 0;
});

describe('credential shapes: nothing planted is ever served or stored', () => {
  it('plants every family in three languages or more', () => {
    const languages = new Map<string, Set<string>>();
    for (const item of planted) {
      // Byte literals and escapes are one family however each language writes them; names are one family.
      const family = item.shape.startsWith('name:') ? 'name' : item.shape.replace(/^key:der-(c|java)-bytes$|^key:der-escapes$/, 'key:der-bytes');
      (languages.get(family) ?? languages.set(family, new Set()).get(family)!).add(item.path.slice(item.path.lastIndexOf('.') + 1));
    }
    for (const [family, extensions] of languages) expect(extensions.size, family).toBeGreaterThanOrEqual(3);
    expect(languages.size).toBeGreaterThanOrEqual(30);
    expect(planted.length).toBeGreaterThanOrEqual(100);
  });

  it('finds what holds no credential, placeholders included: nothing is withheld by mistake', () => {
    for (const channel of ['cli', 'jsonl', 'mcp-stdio']) {
      expect(foundBy(channel), channel).toContain(VISIBLE.control);
      expect(foundBy(channel), channel).toContain(VISIBLE.placeholders);
      for (const item of planted) expect(foundBy(channel).has(item.path), `${channel} found ${item.path}`).toBe(false);
    }
  });

  it('answers nothing of any credential on the CLI, JSONL or MCP over stdio, and stores none under .repodex/', () => {
    const stored = filesUnder(join(root, '.repodex')).map(({ path, text }) => ({ where: path, text }));
    expect(stored.some((file) => file.where.endsWith('last_bundle.md'))).toBe(true);
    expect(stored.some((file) => file.where.endsWith('history.json'))).toBe(true);
    expect(leaks([...answers.map(({ channel, text, carried }, i) => ({ where: `${channel} answer #${i}`, text, ...(carried === undefined ? {} : { carried }) })), ...stored])).toEqual([]);
  });

  it('lists what is withheld, with why, the same on every channel', () => {
    expect(blockedListings.map((listing) => listing.channel)).toEqual(['cli', 'jsonl', 'mcp-stdio']);
    for (const { channel, files: listed } of blockedListings) {
      expect(listed, channel).toEqual(blockedListings[0]!.files);
      const byPath = new Map(listed.map((file) => [file.path as string, file]));
      for (const item of planted.filter((entry) => entry.by === 'content')) {
        const entry = byPath.get(item.path);
        expect(entry, `${channel}: ${item.path}`).toMatchObject({ state: 'secret' });
        expect(entry.rule, `${channel}: ${item.path}`).toMatch(/\w/);
        expect(entry.line, `${channel}: ${item.path}`).toBeGreaterThan(0);
      }
      const named = listed.filter((file) => file.state === 'credential-name');
      expect(named.length, channel).toBe(planted.filter((entry) => entry.by === 'name').length);
      for (const file of named) expect(file.path, channel).toContain('[REDACTED:');
    }
  });
});

/** A team server on each store: the HTTP API and MCP over HTTP, the bytes it keeps, and on PostgreSQL every table. */
describe.each(testBackends())('credential shapes over HTTP on the $name store', (backend) => {
  let server: TeamServer;
  let dataDir = '';
  let repoId = '';
  const http: { where: string; text: string; carried?: string }[] = [];
  const listings: Json[][] = [];

  beforeAll(async () => {
    if (backend.missing) return;
    dataDir = tempDir('repodex-shapes-server-');
    server = await startTeamServer(backend.spec.kind === 'postgres' ? ['--store', backend.spec.url] : [], { dataDir, env: { REPODEX_DAEMON: '0' } });
    const added = await server.request('/repos', { body: { root } });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    repoId = added.body.repo_id;
    const ask = async (path: string, init: { body?: unknown } = {}, carried?: string): Promise<Json> => {
      const response = await server.request(path, init);
      http.push({ where: `http ${path.slice(0, 40)}`, text: JSON.stringify(response.body), ...(carried === undefined ? {} : { carried }) });
      return response.body;
    };
    const paths = new Set<string>();
    for (const group of wordGroups()) {
      const results = (await ask('/search', { body: { repo_id: repoId, query: group.join(' '), top_k: 20 } })).results as Json[];
      for (const hit of results) paths.add(hit.path);
      const ids = results.map((hit) => hit.chunk_id as number);
      for (let at = 0; at < ids.length; at += 5) await ask('/fetch', { body: { repo_id: repoId, ids: ids.slice(at, at + 5) } });
    }
    expect(paths).toContain(VISIBLE.control);
    for (const item of planted) {
      expect(paths.has(item.path), item.path).toBe(false);
      await ask(`/open?repo_id=${repoId}&path=${encodeURIComponent(item.path)}`, {}, echoed(item));
      await ask(`/outline?repo_id=${repoId}&path=${encodeURIComponent(item.path)}`, {}, echoed(item));
    }
    await ask(`/files?repo_id=${repoId}&include_hidden=true&limit=1000`);
    listings.push((await ask(`/files?repo_id=${repoId}&blocked=true&limit=1000`)).files);
    await ask('/bundle', { body: { repo_id: repoId, prompt: `fix the ${planted.slice(0, 20).map((item) => item.word).join(' ')} settings` } });
    await ask('/search', { body: { repo_id: repoId, query: pasted } }, pasted);
    await ask('/bundle', { body: { repo_id: repoId, prompt: pasted } }, pasted);
    await ask(`/audit?repo_id=${repoId}&limit=1000`);
    const client = new Client({ name: 'repodex-credential-shapes-http', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp?repo_id=${repoId}`), withToken(server)));
    try {
      await askMcp(`mcp-http-${backend.name}`, async (name, args) => {
        const result = (await client.callTool({ name, arguments: args })) as Json;
        const carried = JSON.stringify(args).includes('request failed') ? pasted : typeof args.path === 'string' ? args.path : undefined;
        http.push({ where: `mcp-http ${name}`, text: JSON.stringify(result), ...(carried === undefined ? {} : { carried }) });
        if (name === 'repo.list_files' && args.blocked === true) listings.push(result.structuredContent.result.files);
        return result;
      });
    } finally {
      await client.close();
    }
  }, 600_000);

  afterAll(async () => {
    if (backend.missing || !server) return;
    await server.request(`/repos/${repoId}`, { method: 'DELETE' });
    expect(await server.stop()).toBe(0);
  });

  it.skipIf(backend.missing !== undefined)('answers nothing of any credential over HTTP or MCP over HTTP, and keeps none in its files or its log', () => {
    const kept = [...filesUnder(dataDir), ...filesUnder(join(root, '.repodex'))].map(({ path, text }) => ({ where: path, text }));
    expect(leaks([...http, ...kept, { where: 'the server log', text: server.stderr() }])).toEqual([]);
  });

  it.skipIf(backend.missing !== undefined)('lists what is withheld as the CLI does', () => {
    expect(listings).toHaveLength(2);
    const cli = blockedListings.find((listing) => listing.channel === 'cli')!.files;
    for (const listed of listings) expect(listed.map((file) => [file.path, file.state, file.rule, file.line])).toEqual(cli.map((file) => [file.path, file.state, file.rule, file.line]));
  });

  it.skipIf(backend.spec.kind !== 'postgres' || backend.missing !== undefined)('stores no credential in any column of any table', async () => {
    const pool = new pg.Pool({ connectionString: backend.spec.kind === 'postgres' ? backend.spec.url : '' });
    try {
      const tables = await pool.query<{ table_schema: string; table_name: string; has_repo: boolean }>(
        `SELECT t.table_schema, t.table_name, EXISTS (SELECT 1 FROM information_schema.columns c WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name AND c.column_name = 'repo_id') AS has_repo
           FROM information_schema.tables t WHERE t.table_type = 'BASE TABLE' AND t.table_schema NOT IN ('pg_catalog', 'information_schema') AND t.table_schema NOT LIKE 'citus%'`,
      );
      expect(tables.rows.map((table) => table.table_name)).toEqual(expect.arrayContaining(['chunks', 'files', 'segment_postings', 'repo_documents', 'audit_log', 'build_log']));
      const rows: { where: string; text: string }[] = [];
      for (const table of tables.rows) {
        const name = `"${table.table_schema}"."${table.table_name}"`;
        const result = table.has_repo ? await pool.query(`SELECT * FROM ${name} WHERE repo_id::text = $1`, [repoId]) : await pool.query(`SELECT * FROM ${name}`);
        for (const row of result.rows as Record<string, unknown>[]) {
          const text = Object.values(row)
            .map((value) => (Buffer.isBuffer(value) ? value.toString('latin1') : typeof value === 'object' ? JSON.stringify(value) : String(value)))
            .join('\u0001');
          rows.push({ where: table.table_name, text });
        }
      }
      expect(rows.filter((row) => row.where === 'chunks').length).toBeGreaterThan(0);
      expect(leaks(rows)).toEqual([]);
    } finally {
      await pool.end();
    }
  });
});
