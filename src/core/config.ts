import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as z from 'zod/mini';
import { describeIssues } from './issues.js';
import { RepodexError, errorMessage, isErrnoException } from './errors.js';
import { DEFAULT_LIMITS, LIMITS, LIMIT_NAMES, type LimitName, type Limits, resolveLimits } from './limits.js';

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

const ChunkConfigSchema = z.strictObject({
  target_lines: z._default(z.int().check(z.minimum(10), z.maximum(MAX_CHUNK_LINES)), 60),
  max_lines: z._default(z.int().check(z.minimum(10), z.maximum(MAX_CHUNK_LINES)), MAX_CHUNK_LINES),
  overlap_lines: z._default(z.int().check(z.minimum(0), z.maximum(40)), 10),
});

const HistoryConfigSchema = z.strictObject({
  enabled: z._default(z.boolean(), true),
  max_commits: z._default(z.int().check(z.minimum(1), z.maximum(100_000)), 2000),
});

/** The embedding providers (SPEC §6); `off` keeps the index lexical only. */
export const EMBEDDING_PROVIDERS = ['off', 'builtin', 'onnx', 'openai'] as const;

/** The embedding provider a config names. */
export type EmbeddingProvider = (typeof EMBEDDING_PROVIDERS)[number];

const EmbeddingsConfigSchema = z.strictObject({
  provider: z._default(z.enum(EMBEDDING_PROVIDERS), 'off'),
  /** `onnx`: a display name (default: the folder's name); `openai`: the model the endpoint serves. */
  model: z.optional(z.string().check(z.minLength(1))),
  /** `onnx`: a folder holding config.json, tokenizer.json, tokenizer_config.json and onnx/model.onnx (relative to the repository root, or absolute). */
  model_path: z.optional(z.string().check(z.minLength(1))),
  /** `openai`: the endpoint (`http://localhost:11434/v1` for Ollama); the key comes from the variable `api_key_env` names. */
  url: z.optional(z.string().check(z.regex(/^https?:\/\//i, 'an http:// or https:// URL'))),
  /**
   * `openai`: the environment variable holding the key (default REPODEX_EMBEDDINGS_API_KEY), so
   * that repositories served by one process can use different keys without a key in any file.
   */
  api_key_env: z.optional(z.string().check(z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name such as TEAM_EMBEDDINGS_KEY'))),
  /** `openai`: the vector length the model returns. */
  dim: z.optional(z.int().check(z.minimum(2), z.maximum(8192))),
  /** Texts per request or inference batch (default: the provider's). */
  batch_size: z.optional(z.int().check(z.minimum(1), z.maximum(2048))),
  /** `openai`: per-request timeout. */
  timeout_ms: z.optional(z.int().check(z.minimum(100), z.maximum(600_000))),
  /** Prepended to queries / documents before embedding (bge: "Represent this sentence for searching relevant passages: "). */
  query_prefix: z.optional(z.string()),
  document_prefix: z.optional(z.string()),
  /**
   * From this many vectors on, searches walk a nearest-neighbour graph the embedding run keeps
   * beside the vectors instead of scanning them all (default 50,000: see ANN_FROM). A large value
   * keeps search exact; the graph costs build time in embedding runs and disk.
   */
  ann_from: z.optional(z.int().check(z.minimum(1))),
});

const WatchConfigSchema = z.strictObject({
  debounce_ms: z._default(z.int().check(z.minimum(0), z.maximum(60_000)), 500),
});

/** A limit as a config key: a whole number in its range, the message naming both. */
const limitSetting = (name: LimitName) => {
  const { min, max } = LIMITS[name];
  const range = `must be a whole number from ${min} to ${max}`;
  return z.optional(z.int(range).check(z.minimum(min, range), z.maximum(max, range)));
};

/** `limits`: seed 002 §7.3, each overridable by a flag on `serve`. */
const LimitsConfigSchema = z.strictObject(Object.fromEntries(LIMIT_NAMES.map((name) => [name, limitSetting(name)])) as { [K in LimitName]: ReturnType<typeof limitSetting> });

/** Schema of `.repodex/config.json`; unknown keys are rejected so typos surface instead of being ignored. */
export const ConfigSchema = z.strictObject({
  project_type: z._default(z.enum(['auto', 'ts']), 'auto'),
  include_extensions: z.optional(z.array(z.string().check(z.regex(/^\.[^/\\]+$/, 'an extension starts with "." (e.g. ".ts")')))),
  exclude: z._default(z.array(z.string().check(z.minLength(1))), []),
  include_declaration_files: z._default(z.boolean(), false),
  /** Older spelling of `limits.max_file_bytes`, still accepted. */
  max_file_bytes: limitSetting('max_file_bytes'),
  limits: z._default(LimitsConfigSchema, {}),
  /**
   * Index and serve files that have more than one hard link. Off by default: a hard link gives a
   * file a second name the denylist cannot see (`notes.txt` may also be `.env`).
   */
  allow_hard_links: z._default(z.boolean(), false),
  denylist: z._default(z.array(z.string().check(z.minLength(1))), []),
  chunk: z._default(ChunkConfigSchema, { target_lines: 60, max_lines: MAX_CHUNK_LINES, overlap_lines: 10 }),
  /** Build a missing index and refresh a stale one before answering (REPODEX_INDEXING=0 also turns it off). */
  auto_index: z._default(z.boolean(), true),
  /**
   * Where the index lives: `fs` (the default: `.repodex/` in the repository) or a PostgreSQL URL
   * (`postgres://user@host:5432/db`; keep passwords out of it, in PGPASSWORD or ~/.pgpass).
   * `--store` and REPODEX_STORE take precedence.
   */
  store: z.optional(z.string().check(z.minLength(1))),
  /**
   * How a sync finds changed files: `stat` compares every catalogued file's size and mtime;
   * `git` asks `git diff` and `git ls-files` (cheaper on very large trees); `auto` uses git from
   * 25,000 files on (the measured crossover), stats below.
   */
  change_detection: z._default(z.enum(['auto', 'stat', 'git']), 'auto'),
  /** How `watch` and `serve --watch` batch file events: re-index once events have been quiet this long. */
  watch: z._default(WatchConfigSchema, { debounce_ms: 500 }),
  /**
   * Each file's recent commit subjects (the last `max_commits` non-merge commits, 16 subjects a
   * file) as a ranking field; read from git incrementally, kept in .repodex/history.json.
   */
  history: z._default(HistoryConfigSchema, { enabled: true, max_commits: 2000 }),
  /**
   * The semantic layer (SPEC §6): which embedder makes chunk vectors for `--mode vector|hybrid`.
   * `builtin` learns from the repository itself (nothing downloaded); `onnx` runs a local model;
   * `openai` calls an OpenAI-compatible endpoint; `off` keeps the index lexical only.
   */
  embeddings: z._default(EmbeddingsConfigSchema, { provider: 'off' }),
});

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
  return `${JSON.stringify({ ...config, exclude: [], denylist: [], limits: DEFAULT_LIMITS }, null, 2)}\n`;
}

/** The limits a config sets, over the defaults (flags on `serve` may override them for reads). */
export function configLimits(config: Config): Limits {
  return resolveLimits({ ...config.limits, max_file_bytes: config.limits.max_file_bytes ?? config.max_file_bytes });
}

/**
 * Hash of the settings that shape what the index holds: the parsed config (defaults applied, so
 * formatting and key order do not count) without `embeddings` (the vectors follow chunk content
 * whatever embeds them), `watch` and `auto_index` (when to sync, not what) and `store` (where, not what). The config hash of
 * seed 000 §3.6 still decides whether the index is dirty; this decides whether it is rebuilt.
 */
export function indexConfigKey(config: Config): string {
  const { embeddings: _embeddings, watch: _watch, auto_index: _autoIndex, store: _store, ...shaping } = config;
  return createHash('sha256').update(JSON.stringify(shaping)).digest('hex');
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
  const parsed = ConfigSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) {
    throw new RepodexError('CONFIG_INVALID', `${path}: ${describeIssues(parsed.error)}`);
  }
  if (parsed.data.max_file_bytes !== undefined && parsed.data.limits.max_file_bytes !== undefined && parsed.data.max_file_bytes !== parsed.data.limits.max_file_bytes) {
    throw new RepodexError('CONFIG_INVALID', `${path}: max_file_bytes and limits.max_file_bytes disagree: keep limits.max_file_bytes only`);
  }
  const embeddings = parsed.data.embeddings;
  if (embeddings.provider === 'openai' && (embeddings.url === undefined || embeddings.model === undefined || embeddings.dim === undefined)) {
    throw new RepodexError('CONFIG_INVALID', `${path}: embeddings.provider "openai" needs embeddings.url, embeddings.model and embeddings.dim`);
  }
  if (embeddings.provider === 'onnx' && embeddings.model_path === undefined) {
    throw new RepodexError('CONFIG_INVALID', `${path}: embeddings.provider "onnx" needs embeddings.model_path (a folder with config.json, tokenizer.json, tokenizer_config.json and onnx/model.onnx)`);
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
