import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { checkJsonBytes, checkedJsonText, readCheckedJson } from '../core/checked-json.js';
import { errorMessage, isErrnoException, isRepodexError } from '../core/errors.js';
import { writeFileAtomic } from '../core/fs-atomic.js';
import { SECRET_RULES_VERSION } from '../safety/secrets.js';
import { AUDIT_FILE, AUDIT_ROTATED_FILE, redactAuditFile } from './audit.js';

/**
 * The file under `.repodex/` naming the credential rules the data beside it was made under
 * (checked JSON: a damaged one is reported by `verify` and `status`, and makes the next sync run
 * the clean-up again, which is harmless).
 */
export const SECRET_RULES_FILE = 'secret-rules.json';

/** The rules version the marker records, or undefined when there is none or it is damaged. */
function recordedRules(dataDir: string): string | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(dataDir, SECRET_RULES_FILE));
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return undefined;
    throw error;
  }
  try {
    const rules = readCheckedJson(bytes, SECRET_RULES_FILE, 'compact').rules;
    return typeof rules === 'string' ? rules : undefined;
  } catch (error) {
    if (isRepodexError(error)) return undefined;
    throw error;
  }
}

/** The marker's integrity, for `verify` and `status`. */
export function checkSecretRulesMarker(dataDir: string): { checked: string[]; problems: string[] } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(dataDir, SECRET_RULES_FILE));
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) return { checked: [], problems: [] };
    return { checked: [SECRET_RULES_FILE], problems: [`cannot read ${SECRET_RULES_FILE}: ${errorMessage(error)}`] };
  }
  const why = checkJsonBytes(bytes, 'compact');
  return { checked: [SECRET_RULES_FILE], problems: why === undefined ? [] : [`${SECRET_RULES_FILE} is damaged: ${why}; \`repodex sync\` writes it again (after cleaning .repodex/ once more)`] };
}

/**
 * Files under `.repodex/` that an older repodex may have filled with credentials its rules let
 * through, and that the index rebuild (FEATURE_VERSION) does not rewrite by itself:
 * - the audit logs: every string in every line's arguments is redacted (`redactSecrets`);
 * - `last_bundle.json` / `.md`: deleted (a bundle quotes code, perhaps of files now refused);
 * - `history.json`: deleted, rebuilt from git with subjects redacted;
 * - the builtin embedder's table (`vectors/builtin-table.bin`): deleted, so it is learned again
 *   from the chunks the index now holds, without the vocabulary of files now blocked.
 * (The parse cache's outcomes are keyed by the rules version, so none made under older rules is
 * used again; the cache discards itself when the version in its header differs.)
 * Runs at the start of a sync, under the writer lock, once per rules version: it records the
 * version when done. Returns what it did, for the build log.
 */
export async function purgeForSecretRules(dataDir: string): Promise<string[]> {
  if (recordedRules(dataDir) === SECRET_RULES_VERSION) return [];
  const done: string[] = [];
  for (const name of [AUDIT_ROTATED_FILE, AUDIT_FILE]) {
    const redacted = redactAuditFile(join(dataDir, name));
    // The log's lock could not be had: leave the marker unwritten, so the next sync tries again.
    if (redacted === undefined) return [...done, `${name}: not redacted yet (busy): the next sync tries again`];
    if (redacted > 0) done.push(`${name}: ${redacted} line(s) redacted`);
  }
  // A bundle quotes code, and may quote files now refused by name (no content rule would tell):
  // nothing reads it back, so it goes.
  for (const name of ['last_bundle.json', 'last_bundle.md']) {
    if (!existsSync(join(dataDir, name))) continue;
    rmSync(join(dataDir, name), { force: true });
    done.push(`${name}: removed (made under earlier credential rules)`);
  }
  for (const name of ['history.json', join('vectors', 'builtin-table.bin')]) {
    if (!existsSync(join(dataDir, name))) continue;
    rmSync(join(dataDir, name), { force: true });
    done.push(`${name}: removed (made under earlier credential rules)`);
  }
  writeFileAtomic(join(dataDir, SECRET_RULES_FILE), checkedJsonText({ rules: SECRET_RULES_VERSION }, 'compact'), dataDir);
  // The marker of the first repodex that kept one, a plain text file.
  rmSync(join(dataDir, 'secret-rules'), { force: true });
  return done;
}

