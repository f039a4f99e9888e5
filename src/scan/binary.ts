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

/** Why a file's first bytes make it binary, or undefined for text. */
export function sniffBinary(bytes: Uint8Array): 'nul-byte' | 'magic-bytes' | 'invalid-utf8' | undefined {
  const head = bytes.subarray(0, SNIFF_BYTES);
  for (const magic of MAGIC) {
    if (head.length >= magic.length && magic.every((byte, i) => head[i] === byte)) return 'magic-bytes';
  }
  if (head.includes(0)) return 'nul-byte';
  try {
    decoder.decode(trimPartialSequence(head, bytes.length > head.length));
  } catch {
    return 'invalid-utf8';
  }
  return undefined;
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
