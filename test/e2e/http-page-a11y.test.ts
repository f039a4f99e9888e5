import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, type Page, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git, makeRepo, tempDir } from '../helpers.js';
import { type TeamServer, startTeamServer } from '../team-server.js';

// The team server's page checked by axe-core in a real Chromium, at a desktop and a phone width, in
// every state a person meets: no repository yet, results (one selected), a file, a bad permalink,
// a fresh permalink, the token form, and in dark mode. No critical and no serious violation is
// allowed. axe's source is evaluated through the browser's DevTools protocol (page.evaluate),
// which the page's Content-Security-Policy (script-src 'self') does not govern: the page keeps
// its policy in full (no bypassCSP), the server serves nothing new, and the test checks that the
// policy reported no violation.

const CHROMIUM = '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
const HAS_GIT = spawnSync('git', ['--version']).status === 0;
if (!HAS_CHROMIUM) console.warn(`SKIPPED: the page accessibility tests need Chromium at ${CHROMIUM} (install chromium: apt-get install chromium)`);
if (!HAS_GIT) console.warn('SKIPPED: the page accessibility tests need git to make their repository (install git)');

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
/** A line far wider than any pane: the file view must scroll it sideways, inside the pane. */
const LONG_LINE = `export const wide = "${'w'.repeat(600)}";`;

interface Violation {
  id: string;
  impact: 'minor' | 'moderate' | 'serious' | 'critical' | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

describe.skipIf(!HAS_CHROMIUM || !HAS_GIT)('the web page is accessible (axe-core)', () => {
  let empty: TeamServer;
  let server: TeamServer;
  let guarded: TeamServer;
  let browser: Browser;
  /** Console errors and policy violations seen on any page. */
  const problems: string[] = [];
  /** Violations of every impact, by state, for the log. */
  const report: string[] = [];

  beforeAll(async () => {
    const demo = makeRepo(
      {
        'src/config/parse-config.ts': 'export function parseConfig(text: string): unknown {\n  return JSON.parse(text);\n}\n',
        'src/router.ts': 'export class Router {\n  match(path: string): boolean {\n    return path.startsWith("/");\n  }\n}\n',
        'src/wide.ts': `${LONG_LINE}\nexport function wideConfigReader(): string {\n  return wide;\n}\n`,
        'README.md': '# demo\n\nParses the config and routes requests.\n',
      },
      join(tempDir('repodex-a11y-'), 'demo'),
    );
    git(demo, 'init', '-q');
    git(demo, 'add', '-A');
    git(demo, 'commit', '-q', '-m', 'initial');
    const tokenFile = join(tempDir(), 'token');
    const token = 'a11y-test-token-0123456789abcdef';
    writeFileSync(tokenFile, `${token}\n`);
    [empty, server, guarded] = await Promise.all([startTeamServer([]), startTeamServer([demo]), startTeamServer(['--token-file', tokenFile, demo], { token })]);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all([empty?.stop(), server?.stop(), guarded?.stop()]);
    if (report.length) console.log(`axe-core: violations below serious (allowed):\n${report.join('\n')}`);
  });

  async function open(viewport: { width: number; height: number }, url: string, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
    const context = await browser.newContext({ viewport, colorScheme, ...(viewport === PHONE ? { isMobile: true, hasTouch: true } : {}) });
    const page = await context.newPage();
    page.on('console', (message) => {
      const text = message.text();
      // Refusals the test provokes on purpose (a bad permalink, the token the server asks for) are logged as failed loads.
      if (message.type() === 'error' && !/^Failed to load resource: the server responded with a status of (401|404)\b/.test(text)) problems.push(text);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    await page.goto(url);
    return page;
  }

  /** Run axe on the page as it is; fail on critical or serious violations, log the others. */
  async function audit(page: Page, state: string): Promise<void> {
    if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(AXE_SOURCE);
    const violations = (await page.evaluate("axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)")) as Violation[];
    const severe = violations.filter((violation) => violation.impact === 'critical' || violation.impact === 'serious');
    for (const violation of violations.filter((candidate) => !severe.includes(candidate))) report.push(`  ${state}: ${violation.impact} ${violation.id} (${violation.nodes.length})`);
    expect(
      severe.map((violation) => `${violation.impact} ${violation.id}: ${violation.help} — ${violation.nodes.map((node) => `${node.target.join(' ')}: ${node.failureSummary ?? ''}`).join(' | ')}`),
      state,
    ).toEqual([]);
  }

  async function searchFor(page: Page, query: string): Promise<void> {
    await expect.poll(() => page.locator('#repo option').count()).toBeGreaterThan(0);
    await page.locator('#q').fill(query);
    await page.locator(`#results[data-state="done"][data-query=${JSON.stringify(query)}]`).waitFor({ state: 'attached', timeout: 60_000 });
    await page.locator('.hit').first().waitFor();
  }

  for (const [name, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    it(`has no critical or serious violation on a server with no repository (${name})`, async () => {
      const page = await open(viewport, empty.pageUrl);
      await page.locator('.placeholder.idle').waitFor();
      // The keys are told outside the results listbox, which holds only results.
      expect(await page.locator('#results .keys, #results .placeholder').count()).toBe(0);
      expect(await page.locator('#results-note .keys').count()).toBe(1);
      await audit(page, `empty server, ${name}`);
      await page.context().close();
    });

    it(`has no critical or serious violation with results, a selected result and a file open (${name})`, async () => {
      const page = await open(viewport, server.pageUrl);
      await searchFor(page, 'parse config');
      // The pickers keep a name a screen reader says at every width.
      for (const id of ['repo', 'mode']) expect(await page.locator(`label:has(#${id}) .label`).isVisible(), `#${id} label`).toBe(true);
      await audit(page, `results, ${name}`);
      await page.locator('#q').press('ArrowDown');
      expect(await page.locator('.hit[aria-selected="true"]').count()).toBe(1);
      await audit(page, `a selected result, ${name}`);
      await page.locator('.hit').first().click();
      await page.locator('.line.is-hit').first().waitFor();
      await audit(page, `file view, ${name}`);
      await page.context().close();
    });

    it(`scrolls a long line sideways inside the file pane (${name})`, async () => {
      const page = await open(viewport, `${server.pageUrl}#demo/src/wide.ts:L1-L1`);
      await page.locator('.line.is-hit').first().waitFor();
      const box = (await page.evaluate(
        `(() => { const code = document.querySelector('.code'); const pane = document.querySelector('.pane-side').getBoundingClientRect(); const r = code.getBoundingClientRect();
          const last = [...code.querySelectorAll('.line')].pop().getBoundingClientRect();
          code.scrollLeft = 200; return { scrollWidth: code.scrollWidth, clientWidth: code.clientWidth, right: r.right, paneRight: pane.right, scrolled: code.scrollLeft, page: document.documentElement.scrollWidth, viewport: window.innerWidth, below: r.bottom - last.bottom }; })()`,
      )) as { scrollWidth: number; clientWidth: number; right: number; paneRight: number; scrolled: number; page: number; viewport: number; below: number };
      expect(box.scrollWidth).toBeGreaterThan(box.clientWidth);
      expect(box.right).toBeLessThanOrEqual(box.paneRight + 1);
      expect(box.scrolled).toBe(200);
      expect(box.page, 'the page itself does not scroll sideways').toBeLessThanOrEqual(box.viewport);
      // A short file's pane ends under its last line, so the sideways scrollbar is where the long line is.
      expect(box.below).toBeLessThan(40);
      await page.context().close();
    });

    it(`has no critical or serious violation with the token form shown (${name})`, async () => {
      const page = await open(viewport, `${guarded.url}/`);
      await page.locator('#token-dialog').waitFor();
      await audit(page, `token form, ${name}`);
      await page.context().close();
    });
  }

  it('has no critical or serious violation after a bad permalink, and shows the keys beside a fresh permalink', async () => {
    const bad = await open(DESKTOP, `${server.pageUrl}#demo/no/such/file.ts:L1-L2`);
    await bad.locator('.file-view .error').waitFor();
    await audit(bad, 'bad permalink, desktop');
    await bad.context().close();
    const fresh = await open(DESKTOP, `${server.pageUrl}#demo/src/router.ts:L2-L4`);
    await fresh.locator('.line.is-hit').first().waitFor();
    // Not a blank pane: what to type, and the keys.
    await fresh.locator('#results-note .placeholder.idle .keys').waitFor();
    await audit(fresh, 'fresh permalink, desktop');
    await fresh.context().close();
    const unknown = await open(PHONE, `${server.pageUrl}#nosuchrepo/src/router.ts`);
    await unknown.locator('.file-view .error').waitFor();
    await audit(unknown, 'unknown repository in a permalink, phone');
    await unknown.context().close();
  });

  it('has no critical or serious violation in dark mode', async () => {
    const page = await open(DESKTOP, server.pageUrl, 'dark');
    await searchFor(page, 'router match');
    await page.locator('#q').press('ArrowDown');
    await audit(page, 'results, dark');
    await page.locator('.hit').first().click();
    await page.locator('.line.is-hit').first().waitFor();
    await audit(page, 'file view, dark');
    await page.locator('.side-tabs button[data-side="index"]').click();
    await page.locator('.repo-card').first().waitFor();
    await audit(page, 'index status, dark');
    await page.context().close();
  });

  it('kept its Content-Security-Policy: no violation and no error in any console', () => {
    expect(problems).toEqual([]);
  });
});
