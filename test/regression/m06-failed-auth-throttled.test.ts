import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAILED_AUTH_ALLOWANCE, FIRST_LOCKOUT_S } from '../../src/frontends/http/auth-throttle.js';
import { tempDir } from '../helpers.js';
import { type Json, type TeamServer, startTeamServer } from '../team-server.js';

// M6: requests with a wrong bearer token were never throttled (100 of 100 answered 401), and the
// log had a line for each. Failed authentications are now counted per client address, apart from
// its request budget: past the allowance the address is refused (429, Retry-After) without its
// token being checked, for a lockout that grows; the log has one line per lockout.

/** A GET from a loopback address of our choosing (every 127.x address is this machine). */
function getFrom(from: string, url: string, token: string | undefined): Promise<{ status: number; retryAfter: string | undefined; body: Json }> {
  return new Promise((resolve, reject) => {
    const sent = request(url, { localAddress: from, agent: false, headers: token ? { authorization: `Bearer ${token}` } : {} }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'], body: JSON.parse(text) as Json }));
    });
    sent.on('error', reject);
    sent.end();
  });
}

/** The server's JSON log lines about `client`. */
function linesAbout(server: TeamServer, client: string): Json[] {
  return server
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Json)
    .filter((line) => line.client === client);
}

async function until<T>(what: string, ms: number, check: () => T | undefined): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('M6: failed authentications are throttled per client', () => {
  const token = randomBytes(32).toString('hex');
  const dataDir = tempDir('repodex-m06-');
  let server: TeamServer;

  beforeAll(async () => {
    const tokenFile = join(tempDir('repodex-m06-token-'), 'token');
    writeFileSync(tokenFile, `${token}\n`);
    server = await startTeamServer(['--token-file', tokenFile, '--rate-limit', '30'], { token, dataDir });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('M6: 150 wrong tokens: 401 within the allowance, then 429 with Retry-After, unchecked; one log line for the lockout', async () => {
    const attacker = '127.0.0.2';
    const wrong = (i: number) => getFrom(attacker, `${server.url}/repos`, `wrong-token-number-${i}-0000000000`);
    const answers = [];
    for (let i = 0; i <= FAILED_AUTH_ALLOWANCE; i++) answers.push(await wrong(i));
    // The rest as a client in a hurry sends them: 35 at a time (all within the first lockout).
    for (let i = answers.length; i < 150; i += 35) answers.push(...(await Promise.all(Array.from({ length: Math.min(35, 150 - i) }, (_, j) => wrong(i + j)))));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.slice(0, FAILED_AUTH_ALLOWANCE)).toEqual(Array(FAILED_AUTH_ALLOWANCE).fill(401));
    expect(statuses.slice(FAILED_AUTH_ALLOWANCE)).toEqual(Array(150 - FAILED_AUTH_ALLOWANCE).fill(429));
    for (const answer of answers.slice(FAILED_AUTH_ALLOWANCE)) {
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(answer.retryAfter)).toBeLessThanOrEqual(FIRST_LOCKOUT_S);
      expect(answer.body.code).toBe('RATE_LIMITED');
    }
    expect(answers.at(-1)!.body.error).toContain('wrong bearer token');
    // During the lockout the right token is refused too: it is not even checked, so a guess
    // during a lockout tells nothing.
    const right = await getFrom(attacker, `${server.url}/repos`, token);
    expect(right.status).toBe(429);

    // One line for the whole lockout, written when it ends, with what it refused; none per refusal.
    const lockout = await until('the lockout line', 10_000, () => linesAbout(server, attacker).find((line) => line.lockout_s !== undefined));
    // Refused unchecked: the 139 wrong tokens after the one that started it, and the right one.
    expect(lockout).toMatchObject({ level: 'warn', status: 429, failed_auth: FAILED_AUTH_ALLOWANCE + 1, lockout_s: FIRST_LOCKOUT_S, refused: 150 - (FAILED_AUTH_ALLOWANCE + 1) + 1 });
    const lines = linesAbout(server, attacker);
    expect(lines.filter((line) => line.status === 401)).toHaveLength(FAILED_AUTH_ALLOWANCE);
    expect(lines).toHaveLength(FAILED_AUTH_ALLOWANCE + 1);
    // The audit log likewise: the 401s, not the refusals.
    const audited = readFileSync(join(dataDir, 'audit.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Json);
    expect(audited.filter((entry) => entry.client === attacker)).toHaveLength(FAILED_AUTH_ALLOWANCE);

    // The lockout over, the allowance has not come back: the next wrong token starts a longer one.
    const again = await getFrom(attacker, `${server.url}/repos`, 'still-the-wrong-token-000000000');
    expect(again.status).toBe(429);
    expect(Number(again.retryAfter)).toBe(2 * FIRST_LOCKOUT_S);
  });

  it("M6: another address is not held up, and a locked-out address's valid client then has its whole request budget", async () => {
    // A client at another address: its failures are its own (none here), and so is its budget.
    const other = await getFrom('127.0.0.1', `${server.url}/repos`, token);
    expect(other.status).toBe(200);

    // On loopback a valid client may share the address with the one guessing: it waits out the
    // lockout too (the price of refusing unchecked), and then has its budget, which no failure was charged to.
    const shared = '127.0.0.3';
    for (let i = 0; i <= FAILED_AUTH_ALLOWANCE; i++) await getFrom(shared, `${server.url}/repos`, `wrong-again-${i}-00000000000000000`);
    const waiting = await getFrom(shared, `${server.url}/repos`, token);
    expect(waiting.status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, Number(waiting.retryAfter) * 1000 + 100));
    // --rate-limit 30: bursts of 10. Had its 11 failures been charged to it, none would be left.
    const valid = [];
    for (let i = 0; i < 13; i++) valid.push(await getFrom(shared, `${server.url}/repos`, token));
    expect(valid.slice(0, 10).map((answer) => answer.status)).toEqual(Array(10).fill(200));
    const limited = valid.find((answer) => answer.status === 429);
    expect(limited?.body.error).toContain('--rate-limit');
  });
});
