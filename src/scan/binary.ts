/** How many leading bytes decide whether a file is text (SPEC §2: the first 8 KiB). */
export const SNIFF_BYTES = 8192;

const MAGIC: readonly (readonly number[])[] = [
  [0x7f, 0x45, 0x4c, 0x46], // ELF
  [0xcf, 0xfa, 0xed, 0xfe], // Mach-O 64
  [0xce, 0xfa, 0xed, 0xfe], // Mach-O 32
  [0xca, 0xfe, 0xba, 0xbe], // Mach-O fat / Java class
  [0x89, 0x50, 0x4e, 0x47], // PNG
  [0xff, 0xd8, 0xff], // JPEG
  [0x47, 0x49, 0x46, 0x38], // GIF
  [0x25, 0x50, 0x44, 0x46], // PDF
  [0x50, 0x4b, 0x03, 0x04], // ZIP, JAR, docx
  [0x1f, 0x8b], // gzip
  [0x53, 0x51, 0x4c, 0x69, 0x74, 0x65, 0x20, 0x66], // "SQLite f"
  [0x00, 0x61, 0x73, 0x6d], // WebAssembly
  [0x28, 0xb5, 0x2f, 0xfd], // zstd
  [0x42, 0x5a, 0x68], // bzip2
  [0x37, 0x7a, 0xbc, 0xaf], // 7z
  [0x4d, 0x5a, 0x90, 0x00], // PE (MZ with the usual header)
];

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Why a file's first bytes make it binary, or undefined for text. Text is UTF-8, or single-byte
 * text in a legacy encoding (`textEncoding`): a Latin-1 `é` in a comment does not make a source
 * file binary; invalid UTF-8 alongside control bytes or mostly non-ASCII bytes does.
 */
export function sniffBinary(bytes: Uint8Array): 'nul-byte' | 'magic-bytes' | 'invalid-utf8' | undefined {
  const head = bytes.subarray(0, SNIFF_BYTES);
  for (const magic of MAGIC) {
    if (head.length >= magic.length && magic.every((byte, i) => head[i] === byte)) return 'magic-bytes';
  }
  if (head.includes(0)) return 'nul-byte';
  if (isUtf8(head, bytes.length > head.length) || isSingleByteText(head)) return undefined;
  return 'invalid-utf8';
}

/** How a text file's bytes are decoded: UTF-8, or Windows-1252 (Latin-1's superset, what legacy editors write) when its first 8 KiB are not UTF-8. */
export type TextEncoding = 'utf-8' | 'windows-1252';

/** The encoding of a file `sniffBinary` found to be text, decided on the same first 8 KiB. */
export function textEncoding(bytes: Uint8Array): TextEncoding {
  const head = bytes.subarray(0, SNIFF_BYTES);
  return isUtf8(head, bytes.length > head.length) ? 'utf-8' : 'windows-1252';
}

function isUtf8(head: Uint8Array, truncated: boolean): boolean {
  try {
    decoder.decode(trimPartialSequence(head, truncated));
    return true;
  } catch {
    return false;
  }
}

/** At most this share of single-byte text may lie outside ASCII (accented letters in comments and strings). */
const MAX_NON_ASCII_SHARE = 0.25;

/**
 * Whether bytes read as text in a single-byte encoding: no control bytes but tab, line feed,
 * vertical tab, form feed, carriage return and escape; no DEL and none of the five bytes
 * Windows-1252 leaves undefined; and mostly ASCII. Binary data breaks the first rule within a few
 * dozen bytes.
 */
function isSingleByteText(head: Uint8Array): boolean {
  let nonAscii = 0;
  for (const byte of head) {
    if (byte < 0x20) {
      if (byte < 0x09 || (byte > 0x0d && byte !== 0x1b)) return false;
    } else if (byte === 0x7f || byte === 0x81 || byte === 0x8d || byte === 0x8f || byte === 0x90 || byte === 0x9d) {
      return false;
    } else if (byte > 0x7f) {
      nonAscii++;
    }
  }
  return nonAscii <= head.length * MAX_NON_ASCII_SHARE;
}

/** Windows-1252's characters for bytes 0x80–0x9F (the rest of the encoding is Latin-1); its five undefined bytes stay as they are. */
const WINDOWS_1252_HIGH = '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/** Bytes decoded as Windows-1252 (Node's decoder for that label decodes plain Latin-1, so 0x80–0x9F are mapped here). */
export function decodeWindows1252(bytes: Uint8Array): string {
  // The C1 range is where Latin-1 decoding leaves the bytes Windows-1252 gives characters of its own.
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1').replace(/[\x80-\x9f]/g, (ch) => WINDOWS_1252_HIGH[ch.charCodeAt(0) - 0x80]!);
}

/** Drop a multi-byte UTF-8 sequence cut off by the sniff window, so it is not mistaken for garbage. */
function trimPartialSequence(head: Uint8Array, truncated: boolean): Uint8Array {
  if (!truncated) return head;
  let i = head.length - 1;
  let back = 0;
  while (i >= 0 && back < 3 && (head[i]! & 0xc0) === 0x80) {
    i--;
    back++;
  }
  if (i < 0) return head;
  const lead = head[i]!;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return need > back + 1 ? head.subarray(0, i) : head;
}
