import type { core } from 'zod/mini';

/** One line describing validation issues, readable by a person or an agent ("top_k: expected number"). */
export function describeIssues(error: { issues: readonly core.$ZodIssue[] }): string {
  return error.issues
    .map((issue) => {
      const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      if (issue.code === 'unrecognized_keys') return `unknown field(s): ${issue.keys.join(', ')}`;
      if (issue.code === 'invalid_type') {
        if (issue.input === undefined) return `${where}required`;
        return `${where}expected ${issue.expected}, got ${describeValue(issue.input)}`;
      }
      if (issue.code === 'invalid_value') return `${where}expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
      if (issue.code === 'invalid_union' && issue.path.length === 0) return 'unknown request shape';
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
