import { z } from 'zod';

/** meta.json: the commit record of a generation. Written last, by atomic rename; readers start here. */
export const IndexMetaSchema = z.object({
  format_version: z.number().int(),
  tool_version: z.string(),
  generation: z.number().int().nonnegative(),
  generation_dir: z.string(),
  artifacts: z.record(z.string(), z.object({ bytes: z.number().int(), crc32: z.number().int() })),
  config_hash: z.string(),
  project_type: z.string(),
  tokenizer_version: z.number().int(),
  chunker: z.object({ name: z.string(), version: z.number().int(), params_key: z.string() }),
  counts: z.object({
    files: z.number().int(),
    files_indexed: z.number().int(),
    files_skipped: z.number().int(),
    chunks: z.number().int(),
    terms: z.number().int(),
    postings: z.number().int(),
  }),
  source_bytes: z.number().int(),
  git: z.object({ commit: z.string().nullable(), branch: z.string().nullable() }).nullable(),
  synced_at: z.string(),
  duration_ms: z.number(),
});

/** Parsed meta.json. */
export type IndexMeta = z.infer<typeof IndexMetaSchema>;

/** The artifact files of a generation, in the order they are written. */
export const ARTIFACTS = ['files.bin', 'chunks.bin', 'terms.bin', 'postings.bin'] as const;

/** One artifact file name. */
export type ArtifactName = (typeof ARTIFACTS)[number];

/** The fields of meta.json that differ between two syncs of the same tree; everything else is deterministic. */
export const VOLATILE_META_FIELDS = ['generation', 'generation_dir', 'synced_at', 'duration_ms'] as const;
