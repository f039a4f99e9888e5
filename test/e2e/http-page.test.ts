import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, git, makeRepo, tempDir } from '../helpers.js';
import { type TeamServer, startTeamServer } from '../team-server.js';

// The team server's web page in a real browser against a real `serve --http` process: search as
// you type, results grouped by file with the terms marked, the file view and its permalink, the
// index status going from indexing to ready, the keyboard, refused reads, the token form — and
// nothing fetched from anywhere but the server, no Content-Security-Policy violation.

const CHROMIUM = '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
const HAS_GIT = spawnSync('git', ['--version']).status === 0;
if (!HAS_CHROMIUM) console.warn(`SKIPPED: the web page tests need Chromium at ${CHROMIUM} (install chromium: apt-get install chromium)`);
if (!HAS_GIT) console.warn('SKIPPED: the web page tests need git to make their repositories (install git)');

/** Screenshots for people to look at (git-ignored). */
const SHOTS = join(PROJECT_ROOT, 'test-results', 'page');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
/** A fake credential: the page must refuse to show the file, never its text. */
const FAKE_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
/** A legal file name that is also markup. */
const HOSTILE_NAME = 'src/<img src=x onerror=alert(1)>.ts';
/** Files in the repository whose indexing the status panel watches: enough to take seconds. */
const BULK_FILES = 1200;

function commitAll(root: string): void {
  git(root, 'init', '-q');
  git(root, 'add', '-A');
  git(root, 'commit', '-q', '-m', 'initial');
}

/** Enough declarations above parseConfig that its chunk is a part of its file, not all of it. */
function limitChecks(): string[] {
  const lines: string[] = [];
  for (const name of ['Width', 'Height', 'Retries', 'Timeout', 'Workers', 'Batch']) {
    lines.push(`/** Whether a ${name.toLowerCase()} is within its bounds. */`, `export function check${name}(value: number, low: number, high: number): boolean {`);
    lines.push('  if (!Number.isFinite(value)) return false;', '  if (value < low) return false;', '  if (value > high) return false;', '  return true;', '}', '');
  }
  return lines;
}

const DEMO_FILES: Record<string, string> = {
  'src/config/parse-config.ts': [
    '/** Settings read from repodex.json. */',
    'export interface Settings {',
    '  readonly depth: number;',
    '}',
    '',
    '/** The depth used when none is given. */',
    'export const DEFAULT_DEPTH = 3;',
    '',
    '/** Whether a depth is usable: a whole number from 1 to 10. */',
    'export function validDepth(depth: number): boolean {',
    '  if (!Number.isInteger(depth)) return false;',
    '  if (depth < 1) return false;',
    '  if (depth > 10) return false;',
    '  return true;',
    '}',
    '',
    ...limitChecks(),
    '/** Describe settings for a log line. */',
    'export function describeSettings(settings: Settings): string {',
    '  const parts: string[] = [];',
    '  parts.push(`depth ${settings.depth}`);',
    '  if (settings.depth === DEFAULT_DEPTH) parts.push("(default)");',
    '  return parts.join(" ");',
    '}',
    '',
    '/** Parse the config text into settings; unknown keys are refused. */',
    'export function parseConfig(text: string): Settings {',
    '  const raw = JSON.parse(text) as { depth?: number };',
    '  return { depth: raw.depth ?? DEFAULT_DEPTH };',
    '}',
    '',
    '/** Settings as JSON text again. */',
    'export function formatSettings(settings: Settings): string {',
    '  return JSON.stringify({ depth: settings.depth }, null, 2);',
    '}',
    '',
  ].join('\n'),
  'src/router.ts': [
    '/** Routes requests to handlers. */',
    'export class Router {',
    '  private readonly routes = new Map<string, () => string>();',
    '',
    '  add(path: string, handler: () => string): void {',
    '    this.routes.set(path, handler);',
    '  }',
    '',
    '  /** The handler whose route pattern matches the path. */',
    '  match(path: string): (() => string) | undefined {',
    '    for (const [pattern, handler] of this.routes) {',
    '      if (pattern === path) return handler;',
    '    }',
    '    return undefined;',
    '  }',
    '}',
    '',
  ].join('\n'),
  'src/loader.ts': 'import { parseConfig } from "./config/parse-config.js";\n\nexport function loadSettings(text: string) {\n  return parseConfig(text);\n}\n',
  'README.md': '# demo\n\nA tiny repository for the web page tests.\n',
  // A file name and a text that are markup: shown as text, never run or rendered.
  [HOSTILE_NAME]: `export const injectedMarkup = "<script>document.title = 'owned'</script><b>bold</b>";\n`,
  '.env': `AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY=${FAKE_SECRET}\n`,
};

function bulkFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < BULK_FILES; i++) {
    files[`src/area${Math.floor(i / 100)}/unit${i}.ts`] = `export function compute${i}(value: number): number {\n  return value * ${i} + 1;\n}\n\nexport class Holder${i} {\n  read(): number {\n    return compute${i}(2);\n  }\n}\n`;
  }
  return files;
}

/** What a browser context asked for and complained about, for the same-origin and console checks. */
interface Recorder {
  readonly requests: string[];
  readonly problems: string[];
}

function record(context: BrowserContext, recorder: Recorder): void {
  context.on('request', (request) => recorder.requests.push(request.url()));
  context.on('console', (message) => {
    if (message.type() !== 'error' && message.type() !== 'warning') return;
    const text = message.text();
    // Refusals the tests provoke on purpose (a secret file, a path outside the repository, the token
    // the server asks for) are logged by the browser as failed loads: expected, not page errors.
    if (/^Failed to load resource: the server responded with a status of (401|403|404)\b/.test(text)) return;
    recorder.problems.push(`${message.type()}: ${text}`);
  });
  context.on('weberror', (error) => recorder.problems.push(`page error: ${error.error().message}`));
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`) });
}

/** Choose a repository in the picker by name (its label also says when it is not indexed). */
async function pickRepo(page: Page, name: string): Promise<void> {
  await expect.poll(() => page.locator('#repo option').count()).toBeGreaterThan(0);
  const labels = await page.locator('#repo option').allTextContents();
  await page.locator('#repo').selectOption({ index: labels.findIndex((label) => label === name || label.startsWith(`${name} (`)) });
}

/**
 * The search box, typed into as a person would (one key at a time, so the debounce is exercised);
 * resolves when the results of the whole query are shown (the results say which query they answer).
 */
async function search(page: Page, query: string): Promise<void> {
  await page.locator('#q').fill('');
  await page.locator('#q').pressSequentially(query, { delay: 20 });
  await page.locator(`#results[data-state="done"][data-query=${JSON.stringify(query)}]`).waitFor({ timeout: 60_000 });
  await page.locator('.hit').first().waitFor();
}

describe.skipIf(!HAS_CHROMIUM || !HAS_GIT)('the team server web page', () => {
  let demo: string;
  let bulk: string;
  let server: TeamServer;
  let browser: Browser;
  const recorder: Recorder = { requests: [], problems: [] };
  let origins: string[];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    demo = makeRepo(DEMO_FILES, join(tempDir('repodex-page-'), 'demo'));
    commitAll(demo);
    bulk = makeRepo(bulkFiles(), join(tempDir('repodex-page-'), 'bulk'));
    commitAll(bulk);
    server = await startTeamServer([demo, bulk]);
    origins = [new URL(server.url).origin];
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function desktop(): Promise<Page> {
    const context = await browser.newContext({ viewport: DESKTOP });
    record(context, recorder);
    return context.newPage();
  }

  async function phone(): Promise<Page> {
    const context = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
    record(context, recorder);
    return context.newPage();
  }

  it('searches as you type, groups by file, marks the terms, opens the file at the hit, and the permalink restores it', async () => {
    const page = await desktop();
    await page.goto(server.pageUrl);
    await expect.poll(() => page.locator('#repo option').count()).toBe(2);
    await pickRepo(page, 'demo');
    await search(page, 'parse config');

    const groups = page.locator('.group');
    expect(await groups.count()).toBeGreaterThanOrEqual(2);
    const paths = await Promise.all((await groups.all()).map((group) => group.getAttribute('data-path')));
    expect(new Set(paths).size).toBe(paths.length); // one group per file
    expect(paths[0]).toBe('src/config/parse-config.ts');
    // Terms are marked case-insensitively, inside identifiers too: parseConfig holds both.
    const marks = await page.locator('.group').first().locator('mark').allTextContents();
    expect(marks.map((mark) => mark.toLowerCase())).toEqual(expect.arrayContaining(['parse', 'config']));
    expect(marks).toEqual(expect.arrayContaining(['Config']));
    await expect.poll(() => page.locator('.hit .why .chip').count()).toBeGreaterThan(0);
    await shot(page, 'desktop-results');

    // The first hit: its lines, numbered, with exactly the hit's lines highlighted.
    const first = page.locator('.hit').first();
    const start = Number(await first.getAttribute('data-start'));
    const end = Number(await first.getAttribute('data-end'));
    await first.click();
    await page.locator('.line.is-hit').first().waitFor();
    const hitLines = await page.locator('.line.is-hit .ln').allTextContents();
    expect(start).toBeGreaterThan(1); // the hit is a part of the file: lines around it are shown, not highlighted
    expect(await page.locator('.line:not(.is-hit)').count()).toBeGreaterThan(0);
    expect(hitLines.map(Number)).toEqual(Array.from({ length: end - start + 1 }, (_, i) => start + i));
    expect(Number(await page.locator('.line .ln').first().textContent())).toBe(Math.max(1, start - 12));
    const hash = `#demo/src/config/parse-config.ts:L${start}-L${end}`;
    expect(new URL(page.url()).hash).toBe(hash);
    expect(await page.locator('.file-head .permalink').getAttribute('href')).toBe(hash);
    await expect.poll(() => page.locator('.line.is-hit mark').count()).toBeGreaterThan(0);
    await shot(page, 'desktop-file');

    // A fresh page on the permalink shows the same view.
    const fresh = await desktop();
    await fresh.goto(`${server.pageUrl}${hash}`);
    await fresh.locator('.line.is-hit').first().waitFor();
    expect((await fresh.locator('.line.is-hit .ln').allTextContents()).map(Number)).toEqual(hitLines.map(Number));
    expect(await fresh.locator('.file-path').textContent()).toBe('src/config/parse-config.ts');
    expect(await fresh.locator('#repo option:checked').textContent()).toMatch(/^demo/);
  });

  it('shows a method as its declaration path', async () => {
    const page = await desktop();
    await page.goto(server.pageUrl);
    await pickRepo(page, 'demo');
    await search(page, 'route pattern matches');
    // The method the matched lines sit in, under its class: `class Router › match` (or `› add`,
    // whichever method the lines the server picked for the snippet belong to).
    const symbol = page.locator('.hit .symbol').first();
    expect(await symbol.textContent()).toMatch(/^class Router › (match|add)$/);
    expect(await symbol.locator('.symbol-kind').textContent()).toBe('class');
    expect(await symbol.locator('.symbol-name').allTextContents()).toEqual(['Router', expect.stringMatching(/^(match|add)$/)]);

    // The paths field narrows the search.
    await page.locator('#glob').fill('src/config/**');
    await search(page, 'parse config');
    const paths = await Promise.all((await page.locator('.group').all()).map((group) => group.getAttribute('data-path')));
    expect(paths.length).toBeGreaterThan(0);
    for (const path of paths) expect(path).toMatch(/^src\/config\//);
  });

  it('is driven by the keyboard: / focuses the search, arrows move, Enter opens', async () => {
    const page = await desktop();
    await page.goto(`${server.pageUrl}#demo/README.md`);
    await page.locator('.file-path').waitFor();
    await page.locator('.file-view .code').click();
    expect(await page.evaluate('document.activeElement?.id')).not.toBe('q');
    await page.keyboard.press('/');
    expect(await page.evaluate('document.activeElement?.id')).toBe('q');
    await page.keyboard.type('loadSettings');
    // The answer to the whole query, not to a prefix typed on the way (that one is replaced when it comes).
    await page.locator('#results[data-state="done"][data-query="loadSettings"]').waitFor({ timeout: 60_000 });
    await page.locator('.hit').first().waitFor();
    await page.keyboard.press('ArrowDown');
    expect(await page.locator('.hit[aria-selected="true"]').count()).toBe(1);
    const chosen = page.locator('.hit[aria-selected="true"]');
    const path = await chosen.getAttribute('data-path');
    const start = await chosen.getAttribute('data-start');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.file-path').textContent()).toBe(path);
    await page.locator('.line.is-hit').first().waitFor();
    expect(new URL(page.url()).hash).toContain(`:L${start}`);
  });

  it('shows file names and contents as text, never as markup', async () => {
    const page = await desktop();
    let dialogs = 0;
    page.on('dialog', (dialog) => {
      dialogs++;
      void dialog.dismiss();
    });
    await page.goto(server.pageUrl);
    await pickRepo(page, 'demo');
    await search(page, 'injectedMarkup');
    const group = page.locator('.group', { has: page.locator('.hit') }).first();
    expect(await group.getAttribute('data-path')).toBe(HOSTILE_NAME);
    expect(await group.locator('.group-head').textContent()).toContain('<img src=x onerror=alert(1)>.ts');
    expect(await page.locator('.results img, .results b, .results script').count()).toBe(0);
    await group.locator('.hit').first().click();
    await page.locator('.line.is-hit').first().waitFor();
    expect(await page.locator('.file-path').textContent()).toBe(HOSTILE_NAME);
    expect(await page.locator('.line.is-hit .text').first().textContent()).toContain("<script>document.title = 'owned'</script><b>bold</b>");
    expect(await page.locator('.file-view img, .file-view b, .file-view script').count()).toBe(0);
    expect(await page.title()).toBe('repodex');
    expect(dialogs).toBe(0);
  });

  it('refuses to show a secrets file or a path outside the repository, with the reason and what to do', async () => {
    const page = await desktop();
    await page.goto(`${server.pageUrl}#demo/.env:L1-L2`);
    const refusal = page.locator('.file-view .error');
    await refusal.waitFor();
    expect(await refusal.getAttribute('class')).toContain('is-blocked');
    expect(await refusal.locator('.error-title').textContent()).toBe('This file is not shown');
    expect(await refusal.locator('.error-message').textContent()).toMatch(/secret/i);
    expect((await refusal.locator('.error-hint').textContent())?.length).toBeGreaterThan(10);
    expect(await page.content()).not.toContain(FAKE_SECRET);
    expect(await page.locator('.line').count()).toBe(0);

    await page.goto(`${server.pageUrl}#demo/../../etc/passwd`);
    await page.reload();
    const outside = page.locator('.file-view .error');
    await outside.waitFor();
    expect(await outside.locator('.error-message').textContent()).toMatch(/inside the repository/);
    expect(await page.locator('.line').count()).toBe(0);
  });

  it('shows a repository indexing and then ready, with a progress bar, after a rebuild', async () => {
    const page = await desktop();
    await page.goto(server.pageUrl);
    await page.locator('.side-tabs button[data-side="index"]').click();
    const card = page.locator('.repo-card', { has: page.locator('.repo-name', { hasText: /^bulk$/ }) });
    await card.waitFor();
    expect(await card.locator('.state').getAttribute('data-state')).toBe('pending');
    await card.locator('[data-action="rebuild"]').click();
    await card.locator('.state[data-state="indexing"]').waitFor({ timeout: 30_000 });
    // The server's own progress (a phase it reports), not only the page knowing it asked.
    await card.locator('.progress:not([data-phase="starting"])').waitFor({ timeout: 30_000 });
    // For the screenshot only: a bar with counts reads better than the first moment's empty one.
    // Whether the page catches that phase depends on timing, so it is waited for, not asserted.
    await card
      .locator('.progress .meter[aria-valuenow]')
      .waitFor({ timeout: 5_000 })
      .catch(() => console.warn('the screenshot of indexing shows the first phase (no counts yet)'));
    await shot(page, 'desktop-indexing');
    await card.locator('.state[data-state="ready"]').waitFor({ timeout: 90_000 });
    // Ready: the lexical index is built; a bar may remain while vectors are made in the background.
    const phases = await card.locator('.progress').evaluateAll((bars) => bars.map((bar) => bar.getAttribute('data-phase')));
    for (const phase of phases) expect(['train', 'embed', 'graph']).toContain(phase);
    const facts: Record<string, string | null> = {};
    for (const item of await card.locator('.fact').all()) facts[(await item.locator('dt').textContent()) ?? ''] = await item.locator('dd').textContent();
    expect(facts['Files']).toBe(BULK_FILES.toLocaleString('en-US'));
    expect(facts['Last indexed']).toMatch(/just now|ago/);
    expect(facts['Indexed commit']).toMatch(/^[0-9a-f]{7}$/);
    expect(facts['HEAD']).toBe(facts['Indexed commit']);
    expect(await card.locator('.run-outcome').textContent()).toContain('Rebuilt');
    await shot(page, 'desktop-ready');
  });

  it('reads well on a phone: results, the file, and the status panel while indexing and ready', async () => {
    const page = await phone();
    await page.goto(server.pageUrl);
    await pickRepo(page, 'demo');
    await page.locator('#q').tap();
    await search(page, 'parse config');
    await shot(page, 'phone-results');
    await page.locator('.hit').first().tap();
    await page.locator('.line.is-hit').first().waitFor();
    expect(await page.locator('.pane-results').isVisible()).toBe(false);
    await shot(page, 'phone-file');

    await page.locator('#tabs button[data-view="index"]').tap();
    const card = page.locator('.repo-card', { has: page.locator('.repo-name', { hasText: /^bulk$/ }) });
    await card.locator('[data-action="rebuild"]').tap();
    await card.locator('.state[data-state="indexing"]').waitFor({ timeout: 30_000 });
    await card.scrollIntoViewIfNeeded();
    await shot(page, 'phone-indexing');
    await card.locator('.state[data-state="ready"]').waitFor({ timeout: 90_000 });
    await card.scrollIntoViewIfNeeded();
    await shot(page, 'phone-ready');
  });

  it('asks for the token when the server needs one, keeps it for the tab, and then works', async () => {
    const folder = tempDir('repodex-page-token-');
    const token = 'page-test-token-0123456789abcdef';
    const tokenFile = join(folder, 'token');
    writeFileSync(tokenFile, `${token}\n`);
    const guarded = await startTeamServer(['--token-file', tokenFile, '--host', '127.0.0.1', demo], { token });
    origins.push(new URL(guarded.url).origin);
    let opened: Page | undefined;
    try {
      const page = await desktop();
      opened = page;
      await page.goto(`${guarded.url}/`);
      const dialog = page.locator('#token-dialog');
      await dialog.waitFor();
      // A wrong token is refused and asked for again.
      await page.locator('#token-input').fill('not-the-right-token-at-all');
      await page.locator('#token-input').press('Enter');
      await page.locator('#token-error').waitFor();
      expect(await page.locator('#token-error').textContent()).toMatch(/refused/);
      await page.locator('#token-input').fill(token);
      await page.locator('#token-input').press('Enter');
      await dialog.waitFor({ state: 'hidden' });
      await expect.poll(() => page.locator('#repo option').count()).toBe(1);
      expect(await page.evaluate("sessionStorage.getItem('repodex.token')")).toBe(token);
      await search(page, 'parse config');
      expect(await page.locator('.group').first().getAttribute('data-path')).toBe('src/config/parse-config.ts');
      // A reload in the same tab keeps the token: no form.
      await page.reload();
      await expect.poll(() => page.locator('#repo option').count()).toBe(1);
      expect(await dialog.isVisible()).toBe(false);
    } finally {
      // The page polls the server: closed first, it never sees the server gone (a refused load the console would show).
      await opened?.close();
      await guarded.stop();
    }
  });

  it('fetched nothing but from the server, and the console showed no errors or policy violations', () => {
    expect(recorder.requests.length).toBeGreaterThan(20);
    const elsewhere = recorder.requests.filter((url) => !origins.includes(new URL(url).origin));
    expect(elsewhere).toEqual([]);
    expect(recorder.problems).toEqual([]);
  });
});
