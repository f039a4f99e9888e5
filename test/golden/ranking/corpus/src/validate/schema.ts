/** A tiny schema validator: each field names its type; errors list every field that does not match. */
export type Schema = Record<string, 'string' | 'number' | 'boolean'>;

export function validate(schema: Schema, value: Record<string, unknown>): string[] {
  const errors: string[] = [];
  for (const [field, type] of Object.entries(schema)) {
    if (typeof value[field] !== type) errors.push(`${field} must be a ${type}`);
  }
  return errors;
}
