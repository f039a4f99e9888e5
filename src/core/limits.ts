/**
 * The response limits of seed 002 §7.3, in one place: their defaults, their allowed ranges, and
 * how the three sources combine (defaults < `.repodex/config.json` `limits.*` < flags on `serve`).
 */

/** Every limit, resolved. */
export interface Limits {
  /** Largest file that is read (indexed, opened, outlined, fetched). */
  readonly max_file_bytes: number;
  /** Most lines one `open` returns. */
  readonly max_open_lines: number;
  /** Most bytes of JSON one answer carries; longer answers are cut and say how to get the rest. */
  readonly max_total_bytes_per_response: number;
  /** Most results one search returns. */
  readonly max_search_hits: number;
  /** Most files one context bundle cites. */
  readonly max_bundle_files: number;
}

/** A limit's name. */
export type LimitName = keyof Limits;

/**
 * The default response cap. Agents refuse tool results over 25,000 tokens (Claude Code's
 * MAX_MCP_OUTPUT_TOKENS default); dense JSON-escaped code runs at 2.5 to 3.5 bytes per token, so
 * 48 KiB stays under 20,000 tokens even in the worst case.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 48 * 1024;

/** Defaults, and the range each limit may be set to. */
export const LIMITS: { readonly [K in LimitName]: { readonly default: number; readonly min: number; readonly max: number; readonly flag: string } } = {
  max_file_bytes: { default: 1024 * 1024, min: 1, max: 64 * 1024 * 1024, flag: '--max-file-bytes' },
  max_open_lines: { default: 120, min: 1, max: 5000, flag: '--max-open-lines' },
  max_total_bytes_per_response: { default: DEFAULT_MAX_RESPONSE_BYTES, min: 4096, max: 16 * 1024 * 1024, flag: '--max-total-bytes-per-response' },
  max_search_hits: { default: 20, min: 1, max: 100, flag: '--max-search-hits' },
  max_bundle_files: { default: 8, min: 1, max: 50, flag: '--max-bundle-files' },
};

/** The names of the limits, in a fixed order. */
export const LIMIT_NAMES = Object.keys(LIMITS) as LimitName[];

/** The default of every limit. */
export const DEFAULT_LIMITS: Limits = Object.fromEntries(LIMIT_NAMES.map((name) => [name, LIMITS[name].default])) as unknown as Limits;

/** Limits set by some source; unset ones fall through to the next source down. */
export type LimitOverrides = { readonly [K in LimitName]?: number | undefined };

/** Combine sources, lowest priority first: `resolveLimits(config, flags)`. Each value was range-checked where it was read. */
export function resolveLimits(...sources: readonly LimitOverrides[]): Limits {
  const limits: Record<string, number> = { ...DEFAULT_LIMITS };
  for (const source of sources) {
    for (const name of LIMIT_NAMES) {
      const value = source[name];
      if (value !== undefined) limits[name] = value;
    }
  }
  return limits as unknown as Limits;
}

/** Why a limit value is out of range (naming how the user set it: a flag or a config key), or undefined when it is fine. */
export function limitProblem(name: LimitName, value: number, setBy: string): string | undefined {
  const { min, max } = LIMITS[name];
  if (Number.isInteger(value) && value >= min && value <= max) return undefined;
  return `${setBy} must be a whole number from ${min} to ${max}, got ${Number.isFinite(value) ? value : String(value)}`;
}
