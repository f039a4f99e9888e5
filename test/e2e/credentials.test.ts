import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_SHAPES, type TokenShape, keyMaterial, pemAsLiterals, privateKeyLines, randomOf, secretPart } from '../credentials.js';
import { JsonlSession } from '../jsonl-session.js';
import { CLI, makeRepo, runCli } from '../helpers.js';

/**
 * The credential corpus (README "Safe by default"): credentials generated at test time, never
 * real — random strings in each service's token format and keys from generateKeyPairSync — planted
 * by file name and by content across languages and notebooks, next to identifiers a search finds.
 * After a sync, no byte of any of them (nor its lower-cased form) may appear in an answer of any
 * front end (CLI, JSONL, MCP), in `last_bundle.*`, in the audit log (also when the credential is
 * the query text), or in any file under `.repodex/`.
 */

/**
 * A planted credential: where it sits, what must never be seen, a word a search finds beside it,
 * and the credential as someone would paste it into a query (a whole token, URL or key; a file's
 * password found only by the file's name has no such form: nothing can tell it from a word).
 */
interface Planted {
  readonly path: string;
  readonly shape: string;
  readonly secrets: readonly string[];
  readonly word: string;
  readonly pasted?: string;
}

// One distinct word per file: searching for it would find the file if it were indexed.
const WORDS = 'aardvark badger caracal dingo echidna fennec gazelle hoopoe ibex jackal kinkajou lemur marmot narwhal ocelot pangolin quokka raccoon serval tapir urial vicuna wombat xerus yak zorilla axolotl bonobo cassowary dugong eland ferret gibbon hyrax impala jerboa kakapo loris manatee numbat okapi pika quetzal rhea saola tarsier uakari vole walrus yapok zebu agouti binturong coati duiker ermine fossa gerenuk hutia indri jaguarundi kiang langur mara nilgai olingo paca quoll ratel sifaka takin'.split(' ');
let wordIndex = 0;
const nextWord = (): string => WORDS[wordIndex++]!;

type Language = 'ts' | 'js' | 'py' | 'go' | 'java' | 'rs' | 'c' | 'yaml' | 'json' | 'properties' | 'sh';
const LANGUAGES: readonly Language[] = ['ts', 'py', 'go', 'java', 'rs', 'c', 'yaml', 'json', 'properties', 'sh', 'js'];

/** A source file of `language` holding `value` next to an identifier made of `word`. */
function sourceWith(language: Language, word: string, value: string): { path: string; text: string } {
  const name = `${word}_credential`;
  switch (language) {
    case 'ts':
      return { path: `src/${word}.ts`, text: `/** Settings for the ${word} client. */\nexport const ${name} = "${value}";\nexport function ${word}Client(): string {\n  return ${name};\n}\n` };
    case 'js':
      return { path: `lib/${word}.js`, text: `// ${word} integration\nconst ${name} = '${value}';\nmodule.exports = { ${name} };\n` };
    case 'py':
      return { path: `app/${word}.py`, text: `"""The ${word} service."""\n\n${name.toUpperCase()} = "${value}"\n\n\ndef ${word}_client():\n    return ${name.toUpperCase()}\n` };
    case 'go':
      return { path: `pkg/${word}/${word}.go`, text: `package ${word}\n\n// ${name} authenticates the ${word} client.\nconst ${word}Credential = "${value}"\n` };
    case 'java':
      return { path: `java/${word}/Config.java`, text: `package ${word};\n\nclass Config {\n  // ${word} client settings\n  static final String ${name.toUpperCase()} = "${value}";\n}\n` };
    case 'rs':
      return { path: `crates/${word}/src/lib.rs`, text: `/// The ${word} client credential.\npub const ${name.toUpperCase()}: &str = "${value}";\n` };
    case 'c':
      return { path: `native/${word}.c`, text: `/* ${word} client */\nstatic const char *${name} = "${value}";\n` };
    case 'yaml':
      return { path: `deploy/${word}.yaml`, text: `# ${word} deployment\n${word}:\n  credential: "${value}"\n` };
    case 'json':
      return { path: `config/${word}.json`, text: `${JSON.stringify({ service: word, [name]: value }, null, 2)}\n` };
    case 'properties':
      return { path: `resources/${word}.properties`, text: `# ${word} settings\n${word}.credential=${value}\n` };
    case 'sh':
      return { path: `scripts/${word}.sh`, text: `#!/bin/sh\n# ${word} deploy\nexport ${name.toUpperCase()}="${value}"\n` };
  }
}

const planted: Planted[] = [];
const files: Record<string, string> = {};
let subjectToken = '';
let root = '';

function plant(path: string, text: string, shape: string, secrets: readonly string[], word: string, pasted?: string): void {
  files[path] = text;
  planted.push({ path, shape, secrets, word, ...(pasted === undefined ? {} : { pasted }) });
}

function buildCorpus(): void {
  // By content: every token shape, twice, in rotating languages.
  const shapes = Object.keys(TOKEN_SHAPES) as TokenShape[];
  let turn = 0;
  for (let round = 0; round < 2; round++) {
    for (const shape of shapes) {
      const value = TOKEN_SHAPES[shape]();
      const word = nextWord();
      const { path, text } = sourceWith(LANGUAGES[turn++ % LANGUAGES.length]!, word, value);
      plant(path, text, shape, [secretPart(shape, value)], word, value);
    }
  }
  // Private keys one quoted literal per PEM line, in each language's way of joining them.
  const layouts = { python: 'py', js: 'js', 'js-single': 'js', go: 'go', java: 'java', rust: 'rs', c: 'c', csharp: 'cs' } as const;
  for (const [layout, extension] of Object.entries(layouts) as [keyof typeof layouts, string][]) {
    const lines = privateKeyLines(layout === 'go' ? 'ec' : 'rsa');
    const word = nextWord();
    plant(`keys/${word}_test.${extension}`, `// ${word} fixture\n${pemAsLiterals(layout, lines)}`.replace(/^\/\/ /, extension === 'py' ? '# ' : '// '), `pem-${layout}`, keyMaterial(lines), word, lines.join('\n'));
  }
  {
    const lines = privateKeyLines();
    const word = nextWord();
    const body = lines.slice(1).map((line) => `  "${line}\\n"`).join(' +\n');
    plant(`src/${word}Split.ts`, `// ${word} split marker\nexport const ${word}Key = "-----BEGIN RSA " + "PRIVATE KEY-----\\n" +\n${body};\n`, 'pem-split-marker', keyMaterial(lines), word, lines.join('\n'));
  }
  {
    const lines = privateKeyLines();
    const word = nextWord();
    const encoded = Buffer.from(`${lines.join('\n')}\n`).toString('base64');
    plant(`deploy/${word}-tls.yaml`, `# ${word} ingress\napiVersion: v1\nkind: Secret\nmetadata:\n  name: ${word}\ntype: kubernetes.io/tls\ndata:\n  tls.key: ${encoded}\n`, 'pem-base64-k8s', [encoded, ...keyMaterial(lines)], word, `tls.key: ${encoded}`);
  }
  {
    const lines = privateKeyLines();
    const word = nextWord();
    plant(`docs/${word}.md`, `# ${word} setup\n\n\`\`\`\n${lines.join('\n')}\n\`\`\`\n`, 'pem-markdown', keyMaterial(lines), word, lines.join('\n'));
  }
  // Notebooks: not indexed, but served by open.
  for (const shape of ['huggingface', 'jupyter-url', 'openai'] as const) {
    const value = TOKEN_SHAPES[shape]();
    const word = nextWord();
    const notebook = { cells: [{ cell_type: 'code', metadata: {}, source: [`# ${word} training\n`, `TOKEN = "${value}"\n`] }], metadata: {}, nbformat: 4, nbformat_minor: 5 };
    plant(`notebooks/${word}.ipynb`, JSON.stringify(notebook, null, 1), `notebook-${shape}`, [secretPart(shape, value)], word, value);
  }
  // By name: credential stores whose content matches no content rule.
  const names = ['.env', '.env ', '.env.production', '.kube/config', 'infra/prod.tfvars', 'infra/dev.auto.tfvars', '.vault-token', '.npmrc', 'id_rsa', '.aws/credentials', 'credentials.json', 'config/secrets.yml', '.s3cfg', '.boto', '.terraformrc', '.git-credentials', '.composer/auth.json', '.cargo/credentials.toml', 'deploy\\secrets.yml', 'config\\credentials.json'];
  for (const path of names) {
    const value = `${randomOf('abcdefghijklmnopqrstuvwxyz', 6)}${randomOf('ABCDEFGHJKLMNPQRSTUVWXYZ23456789', 18)}`;
    const word = nextWord();
    plant(path, `# ${word} settings\n${word}_password = ${value}\n`, `name:${path}`, [value], word);
  }
  // A control file: proves a search for a planted word would find an indexed file.
  files['src/control.ts'] = `// okapi control\nexport const controlValue = 'visible';\n`;
}

/**
 * Every byte a front end answered, gathered for the final check, with the credential the request
 * itself carried, if any: a search answer repeats its own query (and its terms) to the caller who
 * sent it, which is not the repository serving a credential; the audit log must still not keep it.
 */
const answers: { text: string; carried?: string }[] = [];
const answer = (text: string, carried?: string): void => {
  answers.push(carried === undefined ? { text } : { text, carried });
};

function cli(args: string[], carried?: string): string {
  const run = runCli([...args, '--root', root], { cwd: root });
  const out = run.stdout + run.stderr;
  answer(out, carried);
  return out;
}

/** Every file under a folder, with its bytes. */
function filesUnder(dir: string): { path: string; bytes: Buffer }[] {
  const out: { path: string; bytes: Buffer }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push({ path, bytes: readFileSync(path) });
  }
  return out;
}

beforeAll(async () => {
  buildCorpus();
  root = makeRepo(files);
  const git = (...args: string[]): string => execFileSync('git', ['-C', root, '-c', 'user.email=dev@example.invalid', '-c', 'user.name=Dev', ...args], { encoding: 'utf8' });
  git('init', '-q');
  git('add', '-A');
  subjectToken = TOKEN_SHAPES['github-classic']();
  git('commit', '-q', '-m', `rotate CI token ${subjectToken}`);
  expect(runCli(['sync', '--root', root], { cwd: root }).code).toBe(0);

  const words = planted.map((item) => item.word);
  // CLI: search for each group of words, fetch what came back, open and outline a sample of files, list files, bundle.
  for (let i = 0; i < words.length; i += 10) {
    const out = cli(['search', words.slice(i, i + 10).join(' '), '--json', '--top-k', '20']);
    const ids = (JSON.parse(out.slice(0, out.lastIndexOf('}') + 1)) as { results?: { chunk_id: number }[] }).results?.map((hit) => hit.chunk_id) ?? [];
    if (ids.length > 0) cli(['fetch', '--ids', ids.slice(0, 5).join(',')]);
  }
  for (const item of planted.filter((_, i) => i % 6 === 0)) {
    cli(['open', item.path]);
    cli(['outline', item.path]);
  }
  cli(['files', '--json']);
  cli(['bundle', `update the ${words.slice(0, 12).join(' ')} credential handling`]);
  cli(['search', planted[0]!.pasted!], planted[0]!.pasted); // a credential as query text

  // JSONL: every op on every planted file, and every credential as query text.
  const session = new JsonlSession(root);
  try {
    let id = 0;
    for (const item of planted) {
      const found = await session.request({ id: ++id, op: 'search', q: item.word });
      answer(found);
      const ids = ((JSON.parse(found) as { data?: { results?: { chunk_id: number }[] } }).data?.results ?? []).map((hit) => hit.chunk_id);
      if (ids.length > 0) answer(await session.request({ id: ++id, op: 'fetch', ids: ids.slice(0, 5) }));
      answer(await session.request({ id: ++id, op: 'open', path: item.path }));
      answer(await session.request({ id: ++id, op: 'outline', path: item.path }));
      if (item.pasted !== undefined) answer(await session.request({ id: ++id, op: 'search', q: `request failed: 401\n${item.pasted}` }), item.pasted);
    }
    answer(await session.request({ id: ++id, op: 'search', q: `rotate CI token ${subjectToken}` }), subjectToken);
    answer(await session.request({ id: ++id, op: 'search', q: 'rotate CI token' }));
    answer(await session.request({ id: ++id, op: 'files', include_hidden: true, limit: 1000 }));
    answer(await session.request({ id: ++id, op: 'bundle', prompt: `fix ${words.slice(12, 30).join(' ')} settings` }));
    answer(await session.request({ id: ++id, op: 'audit', limit: 1000 }));
  } finally {
    await session.close();
  }

  // MCP through the SDK client.
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', '--mcp', '--root', root], stderr: 'pipe', env: { ...process.env, NO_COLOR: '1' } as Record<string, string> });
  const mcp = new Client({ name: 'repodex-credentials-test', version: '1.0.0' });
  await mcp.connect(transport);
  try {
    const call = async (name: string, args: Record<string, unknown>, carried?: string): Promise<void> => {
      answer(JSON.stringify(await mcp.callTool({ name, arguments: args })), carried);
    };
    for (const item of planted) {
      await call('repo.search', { query: item.word });
      await call('repo.open_file', { path: item.path });
      await call('repo.outline', { path: item.path });
    }
    await call('repo.search', { query: `stack trace with ${planted[1]!.pasted!}` }, planted[1]!.pasted);
    await call('repo.list_files', { max_results: 1000, include_hidden: true });
    await call('repo.build_context_bundle', { prompt: `review ${words.slice(30, 50).join(' ')} configuration` });
    await call('repo.audit_log', { limit: 1000 });
  } finally {
    await mcp.close();
  }
  cli(['audit', '--limit', '1000', '--json']);
}, 240_000);

afterAll(() => {
  planted.length = 0;
});

describe('credential corpus: nothing planted is ever served or stored', () => {
  it('is large and varied enough to mean something', () => {
    const shapes = new Set(planted.map((item) => item.shape.replace(/^name:.*/, 'name')));
    expect(planted.length).toBeGreaterThanOrEqual(60);
    expect(shapes.size).toBeGreaterThanOrEqual(25);
    const extensions = new Set(planted.map((item) => item.path.slice(item.path.lastIndexOf('.') + 1)));
    for (const extension of ['ts', 'js', 'py', 'go', 'java', 'rs', 'c', 'yaml', 'json', 'properties', 'sh', 'ipynb']) expect(extensions, extension).toContain(extension);
  });

  it('would find the files if they were indexed: a search for a planted word finds the control file', () => {
    expect(answers.some(({ text }) => text.includes('src/control.ts'))).toBe(true);
  });

  it('answers nothing of any credential on any front end, and stores none under .repodex/', () => {
    const dataDir = join(root, '.repodex');
    const stored = filesUnder(dataDir).map(({ path, bytes }) => ({ path, text: bytes.toString('latin1') }));
    expect(stored.some((file) => file.path.endsWith('last_bundle.md'))).toBe(true);
    expect(stored.some((file) => file.path.endsWith('audit.jsonl'))).toBe(true);
    const everything = [...answers.map(({ text, carried }, i) => ({ path: `answer #${i}`, text, carried })), ...stored.map((file) => ({ ...file, carried: undefined }))];
    const leaks: string[] = [];
    const secrets = [
      ...planted.flatMap((item) => item.secrets.map((secret) => ({ where: item.path, secret, pasted: item.pasted }))),
      { where: 'commit subject', secret: subjectToken, pasted: subjectToken },
    ];
    for (const { where, secret, pasted } of secrets) {
      for (const form of new Set([secret, secret.toLowerCase()])) {
        for (const { path, text, carried } of everything) {
          if (carried !== undefined && carried === pasted) continue; // the caller's own query, repeated to the caller
          if (text.includes(form)) leaks.push(`${where}: ${form.slice(0, 12)}… in ${path}`);
        }
      }
    }
    expect(leaks).toEqual([]);
  });

  it('logs credentials used as query text redacted', () => {
    const audit = readFileSync(join(root, '.repodex', 'audit.jsonl'), 'utf8');
    expect(audit).toContain('[REDACTED:');
  });
});
