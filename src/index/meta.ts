import * as z from 'zod/mini';

/** meta.json: the commit record of a generation. Written last, by atomic rename; readers start here. */
export const IndexMetaSchema = z.object({
  format_version: z.int(),
  tool_version: z.string(),
  generation: z.int().check(z.minimum(0)),
  generation_dir: z.string().check(z.regex(/^gen-\d+$/)),
  artifacts: z.record(z.string(), z.object({ bytes: z.int(), crc32: z.int() })),
  config_hash: z.string(),
  project_type: z.string(),
  tokenizer_version: z.int(),
  chunker: z.object({ name: z.string(), version: z.int(), params_key: z.string() }),
  counts: z.object({
    files: z.int(),
    files_indexed: z.int(),
    files_skipped: z.int(),
    chunks: z.int(),
    terms: z.int(),
    postings: z.int(),
  }),
  source_bytes: z.int(),
  git: z.nullable(z.object({ commit: z.nullable(z.string()), branch: z.nullable(z.string()) })),
  synced_at: z.string(),
  duration_ms: z.number(),
});

/** Parsed meta.json. */
export type IndexMeta = z.infer<typeof IndexMetaSchema>;

/** The artifact files of a generation, in the order they are written. */
export const ARTIFACTS = ['files.bin', 'chunks.bin', 'terms.bin', 'postings.bin', 'symbols.bin'] as const;

/** One artifact file name. */
export type ArtifactName = (typeof ARTIFACTS)[number];

/** The fields of meta.json that differ between two syncs of the same tree; everything else is deterministic. */
export const VOLATILE_META_FIELDS = ['generation', 'generation_dir', 'synced_at', 'duration_ms'] as const;
