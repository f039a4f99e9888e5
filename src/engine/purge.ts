import { checkJsonBytes, checkedJsonText, readCheckedJson } from '../core/checked-json.js';
import { errorMessage, isRepodexError } from '../core/errors.js';
import { SECRET_RULES_VERSION } from '../safety/secrets.js';
import { redactEntry } from '../store/audit-lines.js';
import type { ControlPlane, DocumentName, PartCheck } from '../store/control.js';

/**
 * The document naming the credential rules the data beside the index was made under (checked
 * JSON: a damaged one is reported by `verify` and `status`, and makes the next sync run the
 * clean-up again, which is harmless).
 */
export const SECRET_RULES_FILE = 'secret-rules.json';

/** The rules version the marker records, or undefined when there is none or it is damaged. */
async function recordedRules(control: ControlPlane): Promise<string | undefined> {
  const bytes = await control.readDocument(SECRET_RULES_FILE);
  if (!bytes) return undefined;
  try {
    const rules = readCheckedJson(bytes, SECRET_RULES_FILE, 'compact').rules;
    return typeof rules === 'string' ? rules : undefined;
  } catch (error) {
    if (isRepodexError(error)) return undefined;
    throw error;
  }
}

/** The marker's integrity, for `verify` and `status`. */
export async function checkSecretRulesMarker(control: ControlPlane): Promise<PartCheck> {
  let bytes: Buffer | undefined;
  try {
    bytes = await control.readDocument(SECRET_RULES_FILE);
  } catch (error) {
    return { checked: [SECRET_RULES_FILE], problems: [`cannot read ${SECRET_RULES_FILE}: ${errorMessage(error)}`] };
  }
  if (!bytes) return { checked: [], problems: [] };
  const why = checkJsonBytes(bytes, 'compact');
  return { checked: [SECRET_RULES_FILE], problems: why === undefined ? [] : [`${SECRET_RULES_FILE} is damaged: ${why}; \`repodex sync\` writes it again (after cleaning what is kept beside the index once more)`] };
}

/**
 * What a repository keeps beside its index that an older repodex may have filled with credentials
 * its rules let through, and that the index rebuild (FEATURE_VERSION) does not rewrite by itself:
 * - the audit log: every string in every entry's arguments is redacted (`redactSecrets`);
 * - the last bundle: deleted (a bundle quotes code, perhaps of files now refused);
 * - the kept history: deleted, rebuilt from git with subjects redacted (and without the paths
 *   whose names are shaped like a credential);
 * - the builtin embedder's table: deleted, so it is learned again from the
 *   chunks the index now holds, without the vocabulary of files now blocked.
 * (The parse cache's outcomes are keyed by the rules version, so none made under older rules is
 * used again; the cache discards itself when the version in its header differs.)
 * Runs at the start of a sync, under the writer lock, once per rules version: it records the
 * version when done. Returns what it did, for the build log.
 */
export async function purgeForSecretRules(control: ControlPlane): Promise<string[]> {
  if ((await recordedRules(control)) === SECRET_RULES_VERSION) return [];
  const redacted = await control.audit.redact(redactEntry);
  // The log's lock could not be had: leave the marker unwritten, so the next sync tries again.
  if (redacted === undefined) return ['audit log: not redacted yet (busy): the next sync tries again'];
  const done = [...redacted];
  // A bundle quotes code, and may quote files now refused by name (no content rule would tell):
  // nothing reads it back, so it goes. The history is read from git again.
  for (const name of ['last_bundle.json', 'last_bundle.md', 'history.json'] satisfies DocumentName[]) {
    if (await control.removeDocument(name)) done.push(`${control.describe(name)}: removed (made under earlier credential rules)`);
  }
  if (await control.removeEmbedderTable()) done.push('the builtin embedder table: removed (made under earlier credential rules)');
  await control.writeDocument(SECRET_RULES_FILE, checkedJsonText({ rules: SECRET_RULES_VERSION }, 'compact'));
  return done;
}
