import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { RepodexError, errorMessage, isErrnoException } from './errors.js';

/** Extensions indexed when `project_type` is `auto` (SPEC §9). */
export const AUTO_EXTENSIONS = [
  '.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs', '.py', '.go', '.rs', '.java', '.kt',
  '.c', '.h', '.cc', '.cpp', '.hpp', '.cs', '.rb', '.php', '.swift', '.scala', '.sh', '.md', '.json',
  '.yaml', '.yml', '.toml', '.sql',
] as const;

/** Extensions indexed when `project_type` is `ts` (seed 000: TS/TSX only). */
export const TS_EXTENSIONS = ['.ts', '.tsx'] as const;

/** Hard cap on chunk length and fetch length (SPEC §9). */
export const MAX_CHUNK_LINES = 120;

/** Schema of `.repodex/config.json`; unknown keys are rejected so typos surface instead of being ignored. */
export const ConfigSchema = z
  .object({
    project_type: z.enum(['auto', 'ts']).default('auto'),
    include_extensions: z.array(z.string().regex(/^\.[^/\\]+$/, 'an extension starts with "." (e.g. ".ts")')).optional(),
    exclude: z.array(z.string().min(1)).default([]),
    include_declaration_files: z.boolean().default(false),
    max_file_bytes: z.number().int().positive().max(64 * 1024 * 1024).default(1024 * 1024),
    denylist: z.array(z.string().min(1)).default([]),
    chunk: z
      .object({
        target_lines: z.number().int().min(10).max(MAX_CHUNK_LINES).default(60),
        max_lines: z.number().int().min(10).max(MAX_CHUNK_LINES).default(MAX_CHUNK_LINES),
        overlap_lines: z.number().int().min(0).max(40).default(10),
      })
      .strict()
      .default({ target_lines: 60, max_lines: MAX_CHUNK_LINES, overlap_lines: 10 }),
  })
  .strict();

/** The parsed configuration with defaults applied. */
export type Config = z.infer<typeof ConfigSchema>;

/** A config together with the exact bytes it came from (the index remembers their hash). */
export interface LoadedConfig {
  readonly config: Config;
  /** sha256 of the raw file bytes; of the empty string when the file does not exist. */
  readonly hash: string;
  readonly exists: boolean;
}

/** The config written by `repodex init`: every default spelled out so users can see what to change. */
export function defaultConfigText(): string {
  const config = ConfigSchema.parse({});
  return `${JSON.stringify({ ...config, exclude: [], denylist: [] }, null, 2)}\n`;
}

/** Hash of raw config bytes (seed 000 §3.6: never of a re-serialized object). */
export function hashConfigBytes(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Read and validate a config file; a missing file means defaults. */
export function loadConfig(path: string): LoadedConfig {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    if (isErrnoException(error, 'ENOENT')) {
      return { config: ConfigSchema.parse({}), hash: hashConfigBytes(new Uint8Array()), exists: false };
    }
    throw new RepodexError('CONFIG_INVALID', `cannot read ${path}: ${errorMessage(error)}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new RepodexError('CONFIG_INVALID', `${path} is not valid JSON: ${errorMessage(error)}`);
  }
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
    throw new RepodexError('CONFIG_INVALID', `${path}: ${issues}`);
  }
  if (parsed.data.chunk.target_lines > parsed.data.chunk.max_lines) {
    throw new RepodexError('CONFIG_INVALID', `${path}: chunk.target_lines must not exceed chunk.max_lines`);
  }
  return { config: parsed.data, hash: hashConfigBytes(bytes), exists: true };
}

/** Extensions a config indexes, lower-cased. */
export function includedExtensions(config: Config): ReadonlySet<string> {
  const list = config.include_extensions ?? (config.project_type === 'ts' ? TS_EXTENSIONS : AUTO_EXTENSIONS);
  return new Set(list.map((ext) => ext.toLowerCase()));
}
