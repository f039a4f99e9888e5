import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiDocument } from '../api-document.js';
import { PROJECT_ROOT, committedRepo, tempDir } from '../helpers.js';
import { type Json, type TeamServer, startTeamServer } from '../team-server.js';

// The document a real team server serves at /openapi.json, linted by Redocly's CLI with its
// recommended rules (0 errors, 0 warnings), with and without a token, and every schema in it
// compiled by Ajv in strict mode. That its answers match it is test/e2e/openapi-conformance.test.ts.

const HAS_GIT = spawnSync('git', ['--version']).status === 0;
if (!HAS_GIT) console.warn('SKIPPED: the OpenAPI lint test needs git to make its repository (install git)');

const REDOCLY = join(PROJECT_ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
const TOKEN = 'lint-test-token-0123456789abcdef';

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

/** `redocly lint` with the recommended rules on a document; its JSON report. */
function lint(doc: unknown): LintReport {
  const file = join(tempDir('repodex-openapi-'), 'openapi.json');
  writeFileSync(file, JSON.stringify(doc, null, 2));
  // No telemetry and no update check: the test runs offline and sends nothing anywhere.
  const run = spawnSync(process.execPath, [REDOCLY, 'lint', '--extends', 'recommended', '--format', 'json', file], {
    encoding: 'utf8',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NODE_EXTRA_CA_CERTS: '' },
    timeout: 60_000,
  });
  expect(run.error).toBeUndefined();
  try {
    return JSON.parse(run.stdout) as LintReport;
  } catch {
    throw new Error(`redocly lint printed no JSON report (exit ${run.status}):\n${run.stdout}\n${run.stderr}`);
  }
}

describe.skipIf(!HAS_GIT)('the OpenAPI document', () => {
  let open: TeamServer;
  let generated: TeamServer;
  let guarded: TeamServer;

  beforeAll(async () => {
    const root = committedRepo({ 'src/a.ts': 'export const alpha = 1;\n' });
    const tokenFile = join(tempDir(), 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`);
    // The three ways a server runs: --no-token, the token it makes by default, a token file.
    [open, generated, guarded] = await Promise.all([startTeamServer(['--no-token', root]), startTeamServer([root]), startTeamServer(['--token-file', tokenFile, root], { token: TOKEN })]);
  });

  afterAll(async () => {
    await Promise.all([open?.stop(), generated?.stop(), guarded?.stop()]);
  });

  /** The document a server serves, and whether that server asks for a token (what the document must say). */
  async function served(server: TeamServer): Promise<{ doc: Json; needsToken: boolean }> {
    const doc = await server.request('/openapi.json');
    expect(doc.status).toBe(200);
    const bare = await fetch(`${server.url}/repos`);
    return { doc: doc.body, needsToken: bare.status === 401 };
  }

  it('passes redocly lint (recommended rules) with no error and no warning, without a token, with the one it makes and with a token file', async () => {
    const modes = await Promise.all([served(open), served(generated), served(guarded)]);
    expect(modes.map((mode) => mode.needsToken)).toEqual([false, true, true]);
    for (const { doc, needsToken } of modes) {
      const report = lint(doc);
      const problems = report.problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`);
      expect(problems, `token: ${needsToken}`).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
      expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    }
  });

  it('declares security as the server enforces it: a bearer token when it has one, none when it runs without', async () => {
    const { doc: withoutToken } = await served(open);
    expect(withoutToken.security).toEqual([]);
    expect(withoutToken.components.securitySchemes).toBeUndefined();
    const { doc: withToken } = await served(guarded);
    expect(withToken.security).toEqual([{ bearer: [] }]);
    expect(withToken.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    // No operation overrides it: every one needs the token the server asks for.
    for (const operation of new ApiDocument(withToken).operations()) expect(operation.spec.security, operation.id).toBeUndefined();
  });

  it('holds schemas that Ajv compiles in strict mode (JSON Schema 2020-12)', async () => {
    const { doc } = await served(open);
    const count = new ApiDocument(doc).compileAll();
    expect(count).toBeGreaterThan(100);
  });
});
