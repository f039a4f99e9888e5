import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BARE_TOKENS, djangoSecretKey, der, generatedPassword, keyIn, pemLines, privateKey, puttyKey } from '../credential-shapes.js';
import { randomOf } from '../credentials.js';
import { committedRepo, runCli } from '../helpers.js';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Every file under .repodex/ but the audit log (it records what was asked), as latin1 text. */
function dataFiles(root: string): { name: string; text: string }[] {
  return readdirSync(join(root, '.repodex'))
    .filter((name) => name.includes('.') && !name.startsWith('audit'))
    .map((name) => ({ name, text: readFileSync(join(root, '.repodex', name), 'latin1') }));
}

describe('M1: credential shapes served and stored', () => {
  it('M1: redis:// and amqp:// passwords, a PEM built with ${}, a PEM and a DER key in hex, a PuTTY key in Markdown, a Discord webhook, a bare Telegram token, a token split over a constant, a Django SECRET_KEY and a token as a file name are neither indexed, served nor stored', () => {
    const password = generatedPassword();
    const amqpPassword = generatedPassword();
    const webhook = BARE_TOKENS['discord-webhook']();
    const telegram = BARE_TOKENS.telegram();
    const split = `ghp_${randomOf(ALNUM, 34)}`;
    const rsa = privateKey('rsa');
    const pem = pemLines(rsa);
    const pemHex = Buffer.from(`${pem.join('\n')}\n`).toString('hex');
    const derHex = der(privateKey('ec')).toString('hex');
    const putty = puttyKey();
    const django = djangoSecretKey();
    const nameToken = `ghp_${randomOf(ALNUM, 36)}`;
    const root = committedRepo({
      'src/cache.go': `var redisURL = "redis://default:${password}@redis.prod.internal:6379/0"\n`,
      'src/queue.ts': `const u = "amqp://guest:${amqpPassword}@h:5672";\n`,
      'src/bots.py': `WEBHOOK = "${webhook}"\nBOT_TOKEN = "${telegram}"\n`,
      'src/split.ts': `const a = "${split.slice(0, 14)}";\nexport const tok = \`\${a}${split.slice(14)}\`;\n`,
      'src/tmpl.ts': keyIn('ts', pem, 'tmpl', true),
      'src/hexkey.go': `package k\nconst pemHex = "${pemHex}"\n`,
      'src/derkey.go': `package k\nconst derHex = "${derHex}"\n`,
      'docs/deploy.md': `# deploy key\n\n\`\`\`\n${putty.join('\n')}\n\`\`\`\n`,
      'proj/settings.py': `SECRET_KEY = '${django}'\nDEBUG = False\n`,
      [`tokens/${nameToken}.ts`]: 'export const x = 1;\n',
      'src/control.ts': 'export const redisURL = "visible";\n',
    });
    const secrets = [password, amqpPassword, webhook.slice(-40), telegram.slice(-20), split.slice(14), pem[2]!, pemHex.slice(200, 264), derHex.slice(0, 64), putty.at(-2)!, django, nameToken];

    expect(runCli(['sync', '--root', root]).code).toBe(0);
    const files = runCli(['files', '--json', '--root', root]);
    const listed = files.json<{ files: { path: string; state: string }[] }>().files;
    expect(listed.filter((file) => file.state === 'indexed').map((file) => file.path)).toEqual(['src/control.ts']);
    expect(listed).toHaveLength(10);

    const answers = [
      files.stdout,
      runCli(['search', 'redisURL WEBHOOK BOT_TOKEN tok pem pemHex derHex SECRET_KEY', '--top-k', '10', '--json', '--root', root]).stdout,
      runCli(['open', 'src/tmpl.ts', '--end', '3', '--root', root]).stdout,
      runCli(['open', `tokens/${nameToken}.ts`, '--root', root]).stdout,
      runCli(['outline', 'src/hexkey.go', '--root', root]).stdout,
    ];
    expect(answers[1]).toContain('src/control.ts');
    for (const secret of secrets) {
      for (const answer of answers) expect(answer.includes(secret) || answer.toLowerCase().includes(secret.toLowerCase()), secret).toBe(false);
      for (const { name, text } of dataFiles(root)) expect(text.includes(secret) || text.includes(secret.toLowerCase()), `${name}: ${secret.slice(0, 8)}`).toBe(false);
    }

    // What was withheld can be seen, with why, and the name with its credential replaced.
    const blocked = runCli(['files', '--blocked', '--json', '--root', root]).json<{ files: { path: string; state: string; rule?: string; line?: number }[] }>().files;
    const byPath = new Map(blocked.map((file) => [file.path, file]));
    for (const [path, rule] of [
      ['src/cache.go', 'url-password'],
      ['src/queue.ts', 'url-password'],
      ['src/split.ts', 'github-token'],
      ['src/tmpl.ts', 'private-key'],
      ['src/hexkey.go', 'private-key'],
      ['src/derkey.go', 'private-key'],
      ['docs/deploy.md', 'putty-private-key'],
      ['proj/settings.py', 'secret-assignment'],
    ] as const) {
      expect(byPath.get(path), path).toMatchObject({ state: 'secret', rule });
      expect(byPath.get(path)?.line, path).toBeGreaterThan(0);
    }
    expect(byPath.get('src/bots.py')?.state).toBe('secret');
    expect(byPath.get('tokens/[REDACTED:github-pat].ts')).toMatchObject({ state: 'credential-name', rule: 'github-pat' });
  });
});
