/**
 * Field terms live in the same dictionary as content terms, behind a prefix no content term can
 * start with (the tokenizer never emits control characters): one index, one lookup path. Written
 * by the segment builder, looked up by search.
 */
export const PATH_FIELD = '\u0001';
/** Prefix of a term from a name the chunk declares or sits inside. */
export const NAME_FIELD = '\u0002';

/**
 * A path-field value no path can produce (the tokenizer never emits control characters): set on
 * every chunk of a file whose content says it is generated (`looksGenerated`).
 */
export const GENERATED_MARK = '\u0003generated';

/** Prefix of a term from the recent commit subjects of the chunk's file (on its first chunk only). */
export const HISTORY_FIELD = '\u0004';
