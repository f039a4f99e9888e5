import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Apply SQL migration files in name order, skipping those already recorded as applied. */
export async function runMigrations(dir: string, applied: Set<string>, execute: (sql: string) => Promise<void>): Promise<string[]> {
  const ran: string[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.sql')).sort()) {
    if (applied.has(file)) continue;
    await execute(readFileSync(join(dir, file), 'utf8'));
    ran.push(file);
  }
  return ran;
}
