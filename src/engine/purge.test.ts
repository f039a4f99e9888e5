import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TOKEN_SHAPES } from '../../test/credentials.js';
import { tempDir } from '../../test/helpers.js';
import { SECRET_RULES_VERSION } from '../safety/secrets.js';
import { checkedJsonText } from '../core/checked-json.js';
import { FsControlPlane } from '../store/fs/fs-control.js';
import { readAudit } from './audit.js';
import { SECRET_RULES_FILE, checkSecretRulesMarker, purgeForSecretRules } from './purge.js';

describe('purgeForSecretRules', () => {
  it('cleans what an older version left (audit lines, the last bundle, history, the learned table) once per rules version', async () => {
    const dataDir = tempDir();
    mkdirSync(join(dataDir, 'vectors'));
    const token = TOKEN_SHAPES.gitlab();
    const entry = (q: string): string => JSON.stringify({ time: '2026-11-24T10:00:00.000Z', request_id: 'r', frontend: 'cli', op: 'search', args: { q, top_k: 5 }, outcome: 'ok', blocked: false, duration_ms: 1 });
    // Lines of a version before per-line checksums, one with a checksum (a version with fewer rules), and a torn last line.
    const checked = checkedJsonText({ time: '2026-11-24T11:00:00.000Z', request_id: 's', frontend: 'mcp', op: 'search', args: { q: `checked ${token}` }, outcome: 'ok', blocked: false, duration_ms: 2 }, 'line');
    writeFileSync(join(dataDir, 'audit.jsonl'), `${entry('where is the config loaded')}\n${entry(`fetch failed with ${token}`)}\n${checked}\n{"cut by a cr`);
    writeFileSync(join(dataDir, 'audit.1.jsonl'), `${entry(`old ${token}`)}\n`);
    writeFileSync(join(dataDir, 'last_bundle.md'), `# bundle\n\nexport const T = "${token}";\n`);
    writeFileSync(join(dataDir, 'last_bundle.json'), '{"files":[]}\n');
    writeFileSync(join(dataDir, 'history.json'), `{"version":1,"files":{"a.ts":["rotate ${token}"]}}`);
    writeFileSync(join(dataDir, 'vectors', 'builtin-table.bin'), 'old-vocabulary');

    const control = new FsControlPlane(dataDir);
    const done = await purgeForSecretRules(control);
    expect(done.length).toBeGreaterThan(0);
    const audit = readFileSync(join(dataDir, 'audit.jsonl'), 'utf8');
    expect(audit).not.toContain(token);
    expect(audit).toContain('where is the config loaded');
    expect(audit).toContain('[REDACTED:gitlab-pat]');
    expect(audit).not.toContain('cut by a cr');
    expect(statSync(join(dataDir, 'audit.jsonl')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dataDir, 'audit.1.jsonl'), 'utf8')).not.toContain(token);
    // The rewritten lines carry checksums of their own: the log verifies, and every call is still read.
    expect((await control.audit.check(true)).problems).toEqual([]);
    const read = await readAudit(control.audit, undefined, 10);
    expect(read.entries.map((entry) => entry.args.q)).toEqual(['old [REDACTED:gitlab-pat]', 'where is the config loaded', 'fetch failed with [REDACTED:gitlab-pat]', 'checked [REDACTED:gitlab-pat]']);
    expect(read).not.toHaveProperty('warnings');
    expect(existsSync(join(dataDir, 'last_bundle.md'))).toBe(false);
    expect(existsSync(join(dataDir, 'last_bundle.json'))).toBe(false); // it may quote files refused by name
    expect(existsSync(join(dataDir, 'history.json'))).toBe(false);
    expect(existsSync(join(dataDir, 'vectors', 'builtin-table.bin'))).toBe(false);
    expect(JSON.parse(readFileSync(join(dataDir, SECRET_RULES_FILE), 'utf8')).rules).toBe(SECRET_RULES_VERSION);
    expect(await checkSecretRulesMarker(control)).toEqual({ checked: [SECRET_RULES_FILE], problems: [] });

    // Done once: data written under the current rules is left alone.
    writeFileSync(join(dataDir, 'history.json'), '{"version":1}');
    expect(await purgeForSecretRules(control)).toEqual([]);
    expect(existsSync(join(dataDir, 'history.json'))).toBe(true);

    // A damaged marker is reported, and makes the next sync clean up again.
    const marker = readFileSync(join(dataDir, SECRET_RULES_FILE));
    marker[12] = marker[12]! ^ 0x20;
    writeFileSync(join(dataDir, SECRET_RULES_FILE), marker);
    expect((await checkSecretRulesMarker(control)).problems[0]).toMatch(/^secret-rules\.json is damaged: .*`repodex sync` writes it again/);
    expect(await purgeForSecretRules(control)).toEqual(['history.json: removed (made under earlier credential rules)']);
    expect((await checkSecretRulesMarker(control)).problems).toEqual([]);
  });
});
