/**
 * A tiny, complete model folder for the `onnx` provider's tests, written from code: no download,
 * no binary fixture in git. It has the layout transformers.js loads from disk (config.json,
 * tokenizer.json, tokenizer_config.json, onnx/model.onnx) and the interface of a BERT encoder
 * (input_ids, attention_mask, token_type_ids → last_hidden_state), but its "encoder" is one
 * embedding lookup, so a text's mean-pooled vector is the average of its tokens' rows: texts that
 * share words are similar, and everything is deterministic. The ONNX file is protobuf written by
 * hand (a few dozen lines below), so no ONNX tooling is needed either.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RepodexError } from '../../core/errors.js';
import { mulberry32 } from '../../core/prng.js';

/** What the tiny model looks like; every field has a default that the provider's tests rely on. */
export interface TinyOnnxModelOptions {
  /** Width of the vectors (default 64). */
  readonly dim?: number;
  /** Seeds the embedding table: another seed is "another model" with the same shape (default 1). */
  readonly seed?: number;
  /** Also write onnx/model_quantized.onnx (a copy built with seed + 1, so it is tellable apart). */
  readonly quantized?: boolean;
  /** Write a sentence-transformers `1_Pooling/config.json` naming this pooling. */
  readonly pooling?: 'mean' | 'cls';
}

/** The special tokens, at the ids BERT uses them at relative to each other ([PAD] must be 0: padding rows are zero). */
const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];

/**
 * Words that get rows near each other (a shared base plus noise), so the tiny model has a little
 * "semantics" for end-to-end tests: a query for `exception` finds a chunk about `error`.
 */
const GROUPS = [
  'function method def fn func procedure',
  'error exception throw raise panic fail failure',
  'file path dir directory folder',
  'test spec assert expect check',
  'class struct type interface trait',
  'import require include use module package',
  'return yield result',
  'string str text char',
  'number int integer float count',
  'list array vec slice items',
  'map dict hash object record table',
  'read load open parse fetch get',
  'write save store dump put set',
  'user account login auth password token',
  'http request response server client url',
  'config settings options env',
  'index search query find lookup',
  'start begin init create new',
  'stop end close finish exit',
  'add insert append push',
  'remove delete drop pop',
].map((group) => group.split(' '));

/** Other common English and code words: each gets its own random row. */
const WORDS = `
hello world the a an and or not of to in on at by for from with as is are was be been it this that these
if else elif while for each do loop break continue switch case default try catch finally async
await const let var public private protected static final void null none nil true false self
this super extends implements abstract override export async sync lock mutex thread worker
queue stack tree node graph edge key value pair entry cache memory buffer stream byte bytes
line lines word words name names id ids size length width height max min sum avg total
time date clock timer timeout delay retry again once twice first last next prev previous
old new data info debug warn log logger print format render view page html css json xml
yaml toml csv sql db database column row schema migration version build compile run
main app service handler router route controller model view template component state props
event events emit listen callback promise future task job batch chunk segment block span
vector embed embedding similarity score rank ranking bm25 sort order filter limit offset
token tokens tokenize tokenizer split join trim upper lower replace match regex pattern
copy clone move rename merge diff patch commit branch git repo repository sync watch
parent child children root leaf depth walk scan visit ignore skip hidden binary utf8
encode decode encoding decoding compress zip hash sha crc checksum random seed
min max abs sqrt sum mean cosine distance dot normalize scale
user users admin role roles permission access deny allow safe unsafe guard
cli command flag flags arg args argv help usage exit code status ok
`
  .split(/\s+/)
  .filter((word) => word !== '');

/** Continuation pieces, so unknown words split into pieces instead of all becoming [UNK]. */
const SUFFIXES = ['s', 'es', 'ed', 'ing', 'er', 'ers', 'ly', 'tion', 'able', 'ment'];
const PUNCTUATION = Array.from('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');
const LETTERS = Array.from('abcdefghijklmnopqrstuvwxyz');
const DIGITS = Array.from('0123456789');

/** The vocabulary in id order: specials, punctuation, digits, letters, continuation pieces, words. */
function vocabulary(): string[] {
  const tokens = [
    ...SPECIAL,
    ...PUNCTUATION,
    ...DIGITS,
    ...LETTERS,
    ...[...LETTERS, ...DIGITS, ...SUFFIXES].map((piece) => `##${piece}`),
    ...GROUPS.flat(),
    ...WORDS,
  ];
  return [...new Set(tokens)];
}


/** FNV-1a of a string: seeds a token's row from its text, so rows do not move when the vocabulary grows. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** `dim` numbers uniform in [-1, 1) from a seed. */
function randomRow(seed: number, dim: number): Float32Array {
  const next = mulberry32(seed);
  const row = new Float32Array(dim);
  for (let i = 0; i < dim; i++) row[i] = next() * 2 - 1;
  return row;
}

/** The embedding table, vocab × dim, row-major. */
function embeddingTable(vocab: readonly string[], dim: number, seed: number): Float32Array {
  const groupOf = new Map<string, number>();
  GROUPS.forEach((group, g) => group.forEach((word) => groupOf.set(word, g)));
  const table = new Float32Array(vocab.length * dim);
  vocab.forEach((token, id) => {
    const row = randomRow(fnv1a(token) ^ Math.imul(seed, 0x9e3779b1), dim);
    const group = groupOf.get(token);
    if (group !== undefined) {
      const base = randomRow(fnv1a(`group ${group}`) ^ Math.imul(seed, 0x9e3779b1), dim);
      for (let i = 0; i < dim; i++) row[i] = 0.8 * base[i]! + 0.5 * row[i]!;
    }
    // [PAD] stays zero; [CLS]/[SEP]/[UNK] are small, so the two tokens every text has do not pull
    // all mean-pooled vectors together. [CLS] is not zero: cls pooling must still give a vector.
    const scale = token === '[PAD]' ? 0 : SPECIAL.includes(token) ? 0.1 : 1;
    for (let i = 0; i < dim; i++) table[id * dim + i] = scale * row[i]!;
  });
  return table;
}

// --- protobuf, just enough for ONNX -------------------------------------------------------------

/** A protobuf message being written: varint fields (wire type 0) and length-delimited ones (wire type 2). */
class Proto {
  private readonly parts: Uint8Array[] = [];

  /** A varint field (int32, int64, enum) with a non-negative value. */
  int(field: number, value: number): this {
    this.varint((field << 3) | 0);
    this.varint(value);
    return this;
  }

  /** A length-delimited field: bytes, a string, or an embedded message. */
  bytes(field: number, data: Uint8Array): this {
    this.varint((field << 3) | 2);
    this.varint(data.length);
    this.parts.push(data);
    return this;
  }

  string(field: number, text: string): this {
    return this.bytes(field, new TextEncoder().encode(text));
  }

  message(field: number, message: Proto): this {
    return this.bytes(field, message.finish());
  }

  finish(): Uint8Array {
    return Buffer.concat(this.parts);
  }

  private varint(value: number): void {
    // Negative int64s would need the 10-byte two's-complement form; nothing here writes one.
    if (!Number.isSafeInteger(value) || value < 0) throw new RepodexError('INTERNAL', `protobuf varint out of range: ${value}`);
    const out: number[] = [];
    while (value > 0x7f) {
      out.push((value % 128) | 0x80);
      value = Math.floor(value / 128);
    }
    out.push(value);
    this.parts.push(Uint8Array.from(out));
  }
}

/** onnx.proto TensorProto.DataType values. */
const FLOAT = 1;
const INT64 = 7;
/** onnx.proto AttributeProto.AttributeType.INT. */
const ATTRIBUTE_INT = 2;

/** A TensorProto initializer holding `raw` (little-endian values, as ONNX's raw_data requires). */
function tensor(name: string, dataType: number, dims: readonly number[], raw: Uint8Array): Proto {
  const proto = new Proto();
  // Unpacked repeated dims: onnx.proto is proto2, where that is the default encoding.
  for (const dim of dims) proto.int(1, dim);
  return proto.int(2, dataType).string(8, name).bytes(9, raw);
}

/** A ValueInfoProto for a graph input or output; a string dim is symbolic (batch, sequence). */
function valueInfo(name: string, elemType: number, dims: readonly (number | string)[]): Proto {
  const shape = new Proto();
  for (const dim of dims) shape.message(1, typeof dim === 'number' ? new Proto().int(1, dim) : new Proto().string(2, dim));
  const tensorType = new Proto().int(1, elemType).message(2, shape);
  return new Proto().string(1, name).message(2, new Proto().message(1, tensorType));
}

/** A NodeProto with optional INT attributes. */
function node(opType: string, inputs: readonly string[], outputs: readonly string[], attributes: Record<string, number> = {}): Proto {
  const proto = new Proto();
  for (const input of inputs) proto.string(1, input);
  for (const output of outputs) proto.string(2, output);
  proto.string(3, `${opType}_${outputs[0] ?? ''}`).string(4, opType);
  for (const [name, value] of Object.entries(attributes)) {
    proto.message(5, new Proto().string(1, name).int(3, value).int(20, ATTRIBUTE_INT));
  }
  return proto;
}

function float32Bytes(values: Float32Array): Uint8Array {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  values.forEach((value, i) => view.setFloat32(i * 4, value, true));
  return bytes;
}

function int64Bytes(values: readonly number[]): Uint8Array {
  const bytes = new Uint8Array(values.length * 8);
  const view = new DataView(bytes.buffer);
  values.forEach((value, i) => view.setBigInt64(i * 8, BigInt(value), true));
  return bytes;
}

/**
 * The ONNX model: last_hidden_state = (word_embeddings[input_ids] + type_embeddings[token_type_ids])
 * × attention_mask. The mask zeroes padding rows, as a real encoder's output is ignored there;
 * it also makes every input used, so onnxruntime has nothing to warn about.
 */
function onnxModel(vocab: readonly string[], dim: number, seed: number): Uint8Array {
  const words = embeddingTable(vocab, dim, seed);
  const types = new Float32Array(2 * dim);
  const typeRow = randomRow(seed ^ 0x7479706, dim);
  for (let i = 0; i < dim; i++) types[dim + i] = 0.1 * typeRow[i]!; // type 0 (every single-text input) adds nothing

  const graph = new Proto()
    .message(1, node('Gather', ['word_embeddings', 'input_ids'], ['words'], { axis: 0 }))
    .message(1, node('Gather', ['type_embeddings', 'token_type_ids'], ['types'], { axis: 0 }))
    .message(1, node('Add', ['words', 'types'], ['summed']))
    .message(1, node('Cast', ['attention_mask'], ['mask_float'], { to: FLOAT }))
    .message(1, node('Unsqueeze', ['mask_float', 'last_axis'], ['mask']))
    .message(1, node('Mul', ['summed', 'mask'], ['last_hidden_state']))
    .string(2, 'tiny-bert')
    .message(5, tensor('word_embeddings', FLOAT, [vocab.length, dim], float32Bytes(words)))
    .message(5, tensor('type_embeddings', FLOAT, [2, dim], float32Bytes(types)))
    // Unsqueeze takes its axes as an input from opset 13 on; -1 travels as raw little-endian int64.
    .message(5, tensor('last_axis', INT64, [1], int64Bytes([-1])))
    .message(11, valueInfo('input_ids', INT64, ['batch_size', 'sequence_length']))
    .message(11, valueInfo('attention_mask', INT64, ['batch_size', 'sequence_length']))
    .message(11, valueInfo('token_type_ids', INT64, ['batch_size', 'sequence_length']))
    .message(12, valueInfo('last_hidden_state', FLOAT, ['batch_size', 'sequence_length', dim]));

  return new Proto()
    .int(1, 8) // IR version 8 (ONNX 1.10+), which every onnxruntime since 1.10 reads
    .string(2, 'repodex-tiny-onnx-model')
    .message(7, graph)
    .message(8, new Proto().string(1, '').int(2, 13)) // default domain, opset 13
    .finish();
}

/** tokenizer.json in the format of the `tokenizers` library, shaped like bert-base-uncased's. */
function tokenizerJson(vocab: readonly string[]): object {
  const ids = Object.fromEntries(vocab.map((token, id) => [token, id]));
  const special = (token: string) => ({ id: ids[token], content: token, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map(special),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [ids['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [ids['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: ids },
  };
}

/**
 * Write the tiny model into `dir` (created if missing): a folder `embeddings.model_path` can point
 * at. Small (under 150 kB at the default width) and byte-for-byte the same for the same options.
 */
export function writeTinyOnnxModel(dir: string, options: TinyOnnxModelOptions = {}): void {
  const dim = options.dim ?? 64;
  const seed = options.seed ?? 1;
  if (!Number.isInteger(dim) || dim < 1) throw new RepodexError('INTERNAL', `tiny onnx model: dim must be a positive integer (got ${dim})`);
  const vocab = vocabulary();
  const json = (value: object): string => `${JSON.stringify(value, null, 2)}\n`;

  mkdirSync(join(dir, 'onnx'), { recursive: true });
  writeFileSync(
    join(dir, 'config.json'),
    json({
      // "bert" maps to BertModel in transformers.js, which the feature-extraction pipeline runs.
      model_type: 'bert',
      architectures: ['BertModel'],
      _name_or_path: 'repodex/tiny-onnx-model',
      hidden_size: dim,
      vocab_size: vocab.length,
      type_vocab_size: 2,
      max_position_embeddings: 512,
      num_hidden_layers: 0,
      num_attention_heads: 1,
      intermediate_size: dim,
      pad_token_id: 0,
    }),
  );
  writeFileSync(join(dir, 'tokenizer.json'), json(tokenizerJson(vocab)));
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    json({
      tokenizer_class: 'BertTokenizer',
      do_lower_case: true,
      model_max_length: 512,
      cls_token: '[CLS]',
      sep_token: '[SEP]',
      pad_token: '[PAD]',
      unk_token: '[UNK]',
      mask_token: '[MASK]',
      clean_up_tokenization_spaces: true,
    }),
  );
  writeFileSync(join(dir, 'onnx', 'model.onnx'), onnxModel(vocab, dim, seed));
  if (options.quantized) writeFileSync(join(dir, 'onnx', 'model_quantized.onnx'), onnxModel(vocab, dim, seed + 1));
  if (options.pooling) {
    mkdirSync(join(dir, '1_Pooling'), { recursive: true });
    writeFileSync(
      join(dir, '1_Pooling', 'config.json'),
      json({ word_embedding_dimension: dim, pooling_mode_cls_token: options.pooling === 'cls', pooling_mode_mean_tokens: options.pooling === 'mean', pooling_mode_max_tokens: false }),
    );
  }
}
