import type { StoreSpec } from '../../src/store/backend.js';

/** A store the conformance suites run against, or why it cannot run here. */
export interface Backend {
  readonly name: string;
  readonly spec: StoreSpec;
  /** Why this backend is skipped here (no server), or undefined. */
  readonly missing?: string;
}

/** Where each database backend's test server is announced (`.ci/run` starts them and sets these). */
const URL_VARIABLES: Record<string, string> = { postgres: 'REPODEX_TEST_PG_URL', citus: 'REPODEX_TEST_CITUS_URL' };

const announced = new Set<string>();

/**
 * The backends named by BACKENDS (default: all of fs, postgres, citus). A database backend whose
 * server is not announced is skipped, and says so once, loudly, with what would enable it.
 */
export function testBackends(env: NodeJS.ProcessEnv = process.env): Backend[] {
  const names = (env.BACKENDS ?? 'fs,postgres,citus')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  return names.map((name): Backend => {
    if (name === 'fs') return { name, spec: { kind: 'fs' } };
    const variable = URL_VARIABLES[name];
    if (!variable) throw new Error(`BACKENDS: unknown backend ${name} (known: fs, ${Object.keys(URL_VARIABLES).join(', ')})`);
    const url = env[variable];
    if (url) return { name, spec: { kind: 'postgres', url } };
    const missing = `SKIPPED: the ${name} store's tests need a ${name === 'citus' ? 'Citus coordinator' : 'PostgreSQL server with pgvector'}: set ${variable} to its URL (bash .ci/run starts one and does)`;
    if (!announced.has(name)) {
      announced.add(name);
      console.warn(missing);
    }
    return { name, spec: { kind: 'postgres', url: '' }, missing };
  });
}
