import type { core } from 'zod/mini';

/** What zod/mini says for a failed check that was given no message of its own. */
const DEFAULT_MESSAGE = 'Invalid input';

/** One line describing validation issues, readable by a person or an agent ("top_k: expected number"). */
export function describeIssues(error: { issues: readonly core.$ZodIssue[] }): string {
  return error.issues
    .map((issue) => {
      const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      if (issue.code === 'unrecognized_keys') return `unknown field(s): ${issue.keys.join(', ')}`;
      if (issue.code === 'invalid_type') {
        if (issue.input === undefined) return `${where}required`;
        if (typeof issue.input === 'number' && !Number.isFinite(issue.input)) return `${where}must be a finite number, got ${issue.input}`;
        if (issue.expected === 'int' && typeof issue.input === 'number') return `${where}must be a whole number, got ${issue.input}`;
        return `${where}expected ${issue.expected}, got ${describeValue(issue.input)}`;
      }
      if (issue.code === 'invalid_value') return `${where}expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
      if (issue.code === 'invalid_union' && issue.path.length === 0) return 'unknown request shape';
      // A check's own message says it best; zod's default ("Invalid input") says nothing.
      if (issue.message && issue.message !== DEFAULT_MESSAGE) return `${where}${issue.message}`;
      if (issue.code === 'too_big' || issue.code === 'too_small') {
        const bound = issue.code === 'too_big' ? issue.maximum : issue.minimum;
        const unit = issue.origin === 'string' ? ' characters' : issue.origin === 'array' || issue.origin === 'set' ? ' items' : '';
        return `${where}must be ${issue.code === 'too_big' ? 'at most' : 'at least'} ${String(bound)}${unit}`;
      }
      return `${where}${issue.message}`;
    })
    .join('; ');
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && !Number.isInteger(value)) return `number ${value}`;
  return typeof value;
}
