import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/compose.js';
import { readAudit } from '../../src/engine/audit.js';
import { Engine } from '../../src/engine/engine.js';
import { call } from '../../src/protocol/call.js';
import { redactEntry, type AuditEntry } from '../../src/store/audit-lines.js';
import type { StoreSpec } from '../../src/store/backend.js';
import { TOKEN_SHAPES } from '../credentials.js';
import { makeRepo } from '../helpers.js';
import { testBackends } from './backends.js';

// What a repository keeps beside its index — the audit log, analytics, the build log and its
// documents — behaves alike on every store (files under .repodex/, or tables in the database),
// and is shared by every process pointed at the same repository.

const entry = (n: number, q = `query ${n}`): AuditEntry => ({
  time: new Date(Date.UTC(2026, 10, 25, 10, n, 0)).toISOString(),
  request_id: `r${n}`,
  frontend: 'cli',
  op: 'search',
  args: { q },
  outcome: 'ok',
  blocked: false,
  duration_ms: n + 0.25,
});

for (const backend of testBackends()) {
  describe.skipIf(backend.missing !== undefined)(`control plane conformance (store: ${backend.name})`, () => {
    const spec: StoreSpec = backend.spec;
    const repo = (): string => makeRepo({ 'src/a.ts': 'export function loadConfig(path: string) {\n  return path;\n}\n' });

    it('audit: entries from two processes make one log, read oldest first; limit keeps the newest, since filters by time', async () => {
      const root = repo();
      const [one, two] = [openStore(root, spec).control.audit, openStore(root, spec).control.audit];
      for (let n = 0; n < 6; n++) (n % 2 === 0 ? one : two).append(entry(n));
      await Promise.all([one.settled(), two.settled()]);
      const reader = openStore(root, spec).control.audit;
      const all = await readAudit(reader, undefined, 100);
      expect(all.entries.map((e) => e.request_id).sort()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
      expect(all).toMatchObject({ total: 6, truncated: false });
      expect(all).not.toHaveProperty('warnings');
      const newest = await readAudit(reader, undefined, 2);
      expect(newest).toMatchObject({ total: 6, truncated: true });
      expect(newest.entries).toHaveLength(2);
      const since = await readAudit(reader, '2026-11-25T10:04:00Z', 100);
      expect(since.entries.map((e) => e.request_id).sort()).toEqual(['r4', 'r5']);
      expect(since.total).toBe(2);
      // Entries come back exactly as recorded.
      expect(all.entries.find((e) => e.request_id === 'r3')).toEqual(entry(3));
    });

    it('audit: redaction rewrites entries holding a credential, leaves the others alone, and a second pass changes nothing', async () => {
      const root = repo();
      const audit = openStore(root, spec).control.audit;
      const token = TOKEN_SHAPES.gitlab();
      audit.append(entry(1, 'where is the config loaded'));
      audit.append(entry(2, `fetch failed with ${token}`));
      await audit.settled();
      const done = await audit.redact(redactEntry);
      expect(done).toHaveLength(1);
      expect(done![0]).toMatch(/1 (line|row)\(s\) redacted/);
      const read = await readAudit(audit, undefined, 10);
      expect(read.entries.map((e) => e.args.q)).toEqual(['where is the config loaded', 'fetch failed with [REDACTED:gitlab-pat]']);
      expect(JSON.stringify(read)).not.toContain(token);
      expect(await audit.redact(redactEntry)).toEqual([]);
      expect((await audit.check(true)).problems).toEqual([]);
    });

    it('analytics: counts added by several processes add up, with the last query time', async () => {
      const root = repo();
      const stores = [openStore(root, spec), openStore(root, spec)];
      expect(await stores[0]!.control.analytics.read()).toEqual({ queries: 0, hits: 0, misses: 0, last_query_ts: null });
      expect(await stores[0]!.control.analytics.add({ queries: 3, hits: 2, misses: 1, last: '2026-11-25T10:00:00.000Z' })).toBe(true);
      expect(await stores[1]!.control.analytics.add({ queries: 2, hits: 0, misses: 2, last: '2026-11-25T11:00:00.000Z' })).toBe(true);
      expect(await stores[1]!.control.analytics.add({ queries: 1, hits: 1, misses: 0, last: null })).toBe(true);
      expect(await openStore(root, spec).control.analytics.read()).toEqual({ queries: 6, hits: 3, misses: 3, last_query_ts: '2026-11-25T11:00:00.000Z' });
      expect((await stores[0]!.control.analytics.check()).problems).toEqual([]);
    });

    it('documents: missing until written, replaced whole, read back byte for byte, removed once', async () => {
      const root = repo();
      const control = openStore(root, spec).control;
      expect(await control.readDocument('last_bundle.md')).toBeUndefined();
      expect(await control.removeDocument('last_bundle.md')).toBe(false);
      await control.writeDocument('last_bundle.md', '# first\n');
      const bytes = Buffer.from([0, 1, 2, 255, 10]);
      await openStore(root, spec).control.writeDocument('last_bundle.md', bytes);
      expect(await openStore(root, spec).control.readDocument('last_bundle.md')).toEqual(bytes);
      expect(await control.readDocument('history.json')).toBeUndefined();
      expect(await control.removeDocument('last_bundle.md')).toBe(true);
      expect(await control.removeDocument('last_bundle.md')).toBe(false);
      expect(await control.readDocument('last_bundle.md')).toBeUndefined();
    });

    it('the engine keeps its calls, counts, builds and last bundle there, and clean removes the index but keeps them', async () => {
      const root = repo();
      const store = openStore(root, spec);
      const engine = new Engine(root, store, { autoIndex: true, lockWaitMs: 0 });
      await call(engine, { op: 'search', q: 'load config' }, { frontend: 'jsonl' });
      await call(engine, { op: 'search', q: 'zzqx nothing matches this' }, { frontend: 'jsonl' });
      const bundle = (await call(engine, { op: 'bundle', prompt: 'where is the config loaded' }, { frontend: 'jsonl' })).data!;
      const status = await engine.status();
      expect(status.semantic?.analytics).toMatchObject({ queries: 2, hits: 1, misses: 1 });
      const json = await store.control.readDocument('last_bundle.json');
      expect(JSON.parse(json!.toString('utf8'))).toMatchObject({ bundle_id: bundle.bundle_id });
      expect((await store.control.readDocument('last_bundle.md'))!.toString('utf8')).toContain('src/a.ts');
      const audit = await engine.audit(undefined, 50);
      expect(audit.entries.map((e) => [e.frontend, e.op, e.outcome])).toEqual([
        ['jsonl', 'search', 'ok'],
        ['jsonl', 'search', 'ok'],
        ['jsonl', 'bundle', 'ok'],
      ]);
      await engine.clean();
      expect(await store.readMeta()).toBeUndefined();
      expect(await store.stamp()).toBe('');
      const again = new Engine(root, openStore(root, spec), { autoIndex: true, lockWaitMs: 0 });
      expect((await again.audit(undefined, 50)).entries).toHaveLength(3);
      expect((await again.status()).semantic?.analytics).toMatchObject({ queries: 2 });
      expect(await store.control.readDocument('last_bundle.json')).toBeDefined();
      // And the next search indexes again, at a generation no reader saw before.
      expect((await call(again, { op: 'search', q: 'load config' }, { frontend: 'jsonl' })).data!.results.length).toBeGreaterThan(0);
      expect((await again.verify()).problems).toEqual([]);
    });

    it.skipIf(spec.kind === 'fs')('on a database, nothing but the parse cache is written under .repodex/ for what the store keeps', async () => {
      const root = repo();
      const engine = new Engine(root, openStore(root, spec), { autoIndex: true, lockWaitMs: 0 });
      await call(engine, { op: 'search', q: 'load config' }, { frontend: 'jsonl' });
      await call(engine, { op: 'bundle', prompt: 'config' }, { frontend: 'jsonl' });
      await engine.status();
      for (const name of ['audit.jsonl', 'analytics.json', 'build.log', 'last_bundle.json', 'last_bundle.md', 'secret-rules.json', 'history.json', 'meta.json']) {
        expect(existsSync(join(root, '.repodex', name)), name).toBe(false);
      }
    });
  });
}
