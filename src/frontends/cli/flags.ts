import { RepodexError } from '../../core/errors.js';

/** A whole number flag, or undefined when not given. */
export function toInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value.trim())) throw new RepodexError('BAD_REQUEST', `${flag} must be a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** A whole number flag within [min, max], or undefined when not given. */
export function boundedInt(flag: string, value: string | boolean | undefined, min: number, max: number): number | undefined {
  const n = toInt(flag, value as string | undefined);
  if (n !== undefined && (n < min || n > max)) throw new RepodexError('BAD_REQUEST', `${flag} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** `--indexing=on|off` (over REPODEX_INDEXING, for this command only), or undefined when not given. */
export function indexingFlag(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value !== 'on' && value !== 'off') throw new RepodexError('BAD_REQUEST', `--indexing must be on or off, got ${JSON.stringify(value)}`);
  return value === 'on';
}

/** `{[key]: value}`, or nothing when the value is undefined (options that must be absent rather than undefined). */
export function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** Parsed flag values, as node's argument parser gives them. */
export type FlagValues = Readonly<Record<string, string | boolean | undefined>>;
