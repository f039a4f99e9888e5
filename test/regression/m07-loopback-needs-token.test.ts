import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, committedRepo, makeRepo, runCli, runCliAsync, tempDir } from '../helpers.js';
import { type Json, type TeamServer, startTeamServer } from '../team-server.js';

// M7: on loopback without a token, any local process — another user's included — could register
// any folder the server's user can read (POST /repos) and read it through /open and /search. A
// server started with no flags now makes a token in its folder and requires it; the page picks it
// up from the address the server prints, the CLI from the folder; --no-token restores the open
// server, on loopback only.

const CHROMIUM = '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
const HAS_GIT = spawnSync('git', ['--version']).status === 0;
const HAS_CURL = spawnSync('curl', ['--version']).status === 0;
const IS_ROOT = process.getuid?.() === 0;
/** A user other than the one running the tests, to listen on a port as another user would. */
const NOBODY = 65534;
if (!HAS_GIT) console.warn('SKIPPED: M7 needs git to make its repositories (install git)');
if (!HAS_CHROMIUM) console.warn(`SKIPPED: M7's page check needs Chromium at ${CHROMIUM} (install chromium: apt-get install chromium)`);
if (!HAS_CURL) console.warn("SKIPPED: M7's git hook check needs curl (install curl)");
if (!IS_ROOT) console.warn('SKIPPED: M7\'s check that the CLI keeps its token from another user\'s port needs root (to listen as another user)');

describe.skipIf(!HAS_GIT)('M7: a loopback server started with no flags asks for its token', () => {
  /** The environment of the server's user: its own state folder, so the default data dir is a fresh one. */
  const home = tempDir('repodex-m07-home-');
  const env = { HOME: home, XDG_STATE_HOME: join(home, 'state'), REPODEX_TOKEN: '' };
  const dataDir = join(home, 'state', 'repodex', 'server');
  const tokenPath = join(dataDir, 'token');
  let demo: string;
  let server: TeamServer;

  beforeAll(async () => {
    demo = committedRepo({ 'src/notes.ts': 'export function privateNoteKeeper() {\n  return 1;\n}\n' });
    server = await startTeamServer([demo], { env, dataDir: 'default' });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('M7: makes a 256-bit token in its default folder (file 0600, folder 0700), prints the page address with it, and keeps it across restarts', async () => {
    const token = readFileSync(tokenPath, 'utf8').trim();
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(tokenPath).mode & 0o777).toBe(0o600);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(server.pageUrl).toBe(`${server.url}/?token=${token}`);
    expect(server.token).toBe(token);
    expect(server.stderr()).toContain(tokenPath);
  });

  it('M7: refuses POST /repos, /search, /open and /mcp without the token; the page shell loads', async () => {
    const folder = makeRepo({ '.repodex/.keep': '', 'note.ts': 'export const privateNote = 1;\n' }, join(tempDir('repodex-m07-'), 'fakerepo'));
    const anonymous = { authorization: '' };
    const add = await server.request('/repos', { body: { root: folder }, headers: anonymous });
    expect(add.status).toBe(401);
    expect(add.body.error).toContain('bearer token');
    const repoId = ((await server.request('/repos')).body.repos as Json[])[0].repo_id as string;
    const search = await server.request('/search', { body: { repo_id: repoId, query: 'privateNoteKeeper' }, headers: anonymous });
    expect(search.status).toBe(401);
    const open = await server.request(`/open?repo_id=${repoId}&path=src/notes.ts`, { headers: anonymous });
    expect(open.status).toBe(401);
    expect(JSON.stringify(open.body)).not.toContain('privateNoteKeeper');
    const mcp = await server.request('/mcp', { body: {}, headers: anonymous });
    expect(mcp.status).toBe(401);
    const wrong = await server.request(`/open?repo_id=${repoId}&path=src/notes.ts`, { headers: { authorization: 'Bearer not-this-servers-token-000000' } });
    expect(wrong.status).toBe(401);
    // The folder was not registered, and with the token everything answers.
    expect(((await server.request('/repos')).body.repos as Json[]).map((repo) => repo.root)).toEqual([demo]);
    expect((await server.request(`/open?repo_id=${repoId}&path=src/notes.ts`)).body.lines[0]).toContain('privateNoteKeeper');
    const shell = await fetch(`${server.url}/`);
    expect(shell.status).toBe(200);
    expect(await shell.text()).toContain('<html');
  });

  it.skipIf(!HAS_CHROMIUM)('M7: the page takes the token from the address it was opened at, keeps it for the tab and takes it out of the address bar; no log holds it', async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    try {
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${server.pageUrl}#demo`);
      await expect.poll(() => page.locator('#repo option').count()).toBe(1);
      expect(await page.locator('#token-dialog').isVisible()).toBe(false);
      expect(await page.evaluate("sessionStorage.getItem('repodex.token')")).toBe(server.token);
      expect(page.url()).toBe(`${server.url}/#demo`);
      await page.locator('#q').pressSequentially('privateNoteKeeper', { delay: 20 });
      await page.locator('#results[data-state="done"][data-query="privateNoteKeeper"] .hit').first().waitFor({ timeout: 60_000 });
      // The address was replaced, not pushed: going back never shows the token again.
      await page.goBack();
      expect(page.url()).not.toContain('token=');
    } finally {
      await browser.close();
    }
    // The first page load is in the request log, without its query; nothing but the start line names the token.
    const lines = server.stderr().split('\n');
    const pageLoad = lines.find((line) => line.includes('"path":"/"'));
    expect(pageLoad).toBeDefined();
    expect(lines.filter((line) => line.includes(server.token!))).toEqual([expect.stringMatching(/^repodex: serving .* \(web page at /)]);
    expect(readFileSync(join(dataDir, 'audit.jsonl'), 'utf8')).not.toContain(server.token);
    expect(readFileSync(join(demo, '.repodex', 'audit.jsonl'), 'utf8')).not.toContain(server.token);
  });

  it('M7: the CLI (repo add, --repo) finds the token itself in the default folder; a wrong one is named with where the right one is', async () => {
    const cli = { ...env, REPODEX_SERVER: server.url, NODE_EXTRA_CA_CERTS: '' };
    const other = committedRepo({ 'lib/widget.ts': 'export function widgetAssembler() {}\n' });
    const add = await runCliAsync(['repo', 'add', other, '--name', 'widgets', '--json'], { env: cli });
    expect(add.code, add.stderr).toBe(0);
    expect(JSON.parse(add.stdout).created).toBe(true);
    const search = await runCliAsync(['search', 'widgetAssembler', '--repo', 'widgets', '--json'], { env: cli });
    expect(search.code, search.stderr).toBe(0);
    expect(JSON.parse(search.stdout).results[0].path).toBe('lib/widget.ts');
    const wrong = await runCliAsync(['repo', 'list'], { env: { ...cli, REPODEX_TOKEN: 'a-token-of-some-other-server-0000' } });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('refused the token from REPODEX_TOKEN');
    expect(wrong.stderr).toContain(tokenPath);
    // Another user's folder holds no token of this server: the CLI sends none and says where to find it.
    const elsewhere = await runCliAsync(['repo', 'list'], { env: { ...cli, XDG_STATE_HOME: tempDir('repodex-m07-other-') } });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain('needs a bearer token and none was sent');
  });

  it.skipIf(!IS_ROOT)("M7: the CLI does not send its token to a port another user listens on", async () => {
    const script = join(tempDir('repodex-m07-fake-'), 'fake-server.cjs');
    // A server of another user that notes what it is sent and answers as a repodex server asking for a token would.
    writeFileSync(
      script,
      [
        "const http = require('node:http');",
        'const server = http.createServer((request, response) => {',
        "  process.stdout.write(JSON.stringify({ authorization: request.headers.authorization ?? null }) + '\\n');",
        "  response.writeHead(401, { 'content-type': 'application/json' });",
        "  response.end(JSON.stringify({ ok: false, code: 'UNAUTHORIZED', error: 'this server needs a bearer token' }));",
        '});',
        "server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n'));",
      ].join('\n'),
    );
    chmodSync(join(script, '..'), 0o755);
    const fake: ChildProcess = spawn(process.execPath, [script], { uid: NOBODY, gid: NOBODY, stdio: ['ignore', 'pipe', 'inherit'] });
    let seen = '';
    fake.stdout!.setEncoding('utf8').on('data', (text: string) => (seen += text));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the other user's server did not start: ${seen}`)), 10_000);
        fake.stdout!.on('data', () => {
          const found = /"port":(\d+)/.exec(seen);
          if (found) {
            clearTimeout(timer);
            resolve(Number(found[1]));
          }
        });
      });
      const run = await runCliAsync(['repo', 'list'], { env: { ...env, REPODEX_SERVER: `http://127.0.0.1:${port}`, NODE_EXTRA_CA_CERTS: '' } });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`goes only to a server run by you, and what listens on port ${port} is not`);
      expect(seen).toContain('"authorization":null');
      expect(seen).not.toContain(server.token!);
    } finally {
      fake.kill();
    }
  });

  it.skipIf(!HAS_CURL)("M7: README's git hook re-indexes with the server's own token", async () => {
    const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
    const hook = /```sh\n(#!\/bin\/sh\n# Tell the repodex server[\s\S]*?)```/.exec(readme)?.[1];
    expect(hook, 'the post-commit hook in README.md').toBeDefined();
    const repoId = ((await server.request('/repos')).body.repos as Json[]).find((repo) => repo.root === demo).repo_id as string;
    writeFileSync(join(demo, 'src', 'hooked.ts'), 'export function hookedAfterCommit() {}\n');
    const hookPath = join(demo, '.git', 'hooks', 'post-commit');
    mkdirSync(join(demo, '.git', 'hooks'), { recursive: true });
    writeFileSync(hookPath, hook!, { mode: 0o755 });
    const commit = spawnSync('sh', ['-c', 'git add -A && git -c user.email=t@e -c user.name=t commit -qm hooked'], { cwd: demo, env: { ...process.env, ...env, REPODEX_SERVER: server.url }, encoding: 'utf8' });
    expect(commit.status, commit.stderr).toBe(0);
    const pushed = /"method":"POST","path":"\/hooks\/push"[^\n]*"status":(\d+)/;
    const deadline = Date.now() + 30_000;
    while (!pushed.test(server.stderr())) {
      if (Date.now() > deadline) throw new Error(`the hook never reached the server:\n${server.stderr().slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(pushed.exec(server.stderr())![1]).toBe('200');
    const found = await server.request('/search', { body: { repo_id: repoId, query: 'hookedAfterCommit' } });
    expect(found.body.results[0].path).toBe('src/hooked.ts');
  });

  it('M7: keeps the token across restarts, and refuses to start on a token file others may read', async () => {
    await server.stop();
    server = await startTeamServer([], { env, dataDir: 'default' });
    expect(server.token).toBe(readFileSync(tokenPath, 'utf8').trim());
    await server.stop();
    chmodSync(tokenPath, 0o644);
    const refused = runCli(['serve', '--http', '--port', '0'], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`chmod 600 ${tokenPath}`);
    chmodSync(tokenPath, 0o600);
    server = await startTeamServer([], { env, dataDir: 'default' });
  });

  it('M7: --no-token restores the open loopback server, says so, and is refused beyond loopback or with --token-file', async () => {
    const open = await startTeamServer(['--no-token'], { env, dataDir: tempDir('repodex-m07-open-') });
    try {
      expect(open.token).toBeUndefined();
      expect(open.stderr()).toContain('every user and process on this machine may use it');
      const folder = committedRepo({ 'a.ts': 'export const a = 1;\n' });
      const add = await open.request('/repos', { body: { root: folder } });
      expect(add.status).toBe(201);
    } finally {
      await open.stop();
    }
    const network = runCli(['serve', '--http', '--port', '0', '--no-token', '--host', '0.0.0.0', '--data-dir', tempDir()], { env });
    expect(network.code).toBe(1);
    expect(network.stderr).toContain('--no-token would open the server to everyone who can reach 0.0.0.0');
    const both = runCli(['serve', '--http', '--port', '0', '--no-token', '--token-file', join(home, 'nope'), '--data-dir', tempDir()], { env });
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('--no-token and --token-file');
    const help = runCli(['serve', '--help']);
    expect(help.stdout).toMatch(/--no-token +ask for no token: trusts every user and process on this machine/);
  });
});
