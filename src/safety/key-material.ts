import type { ByteRun, Run } from './literal-views.js';

/**
 * Private keys recognised by what they are, not by how they are labelled: a key's marker lines can
 * be built any way a language allows (`-----BEGIN RSA ${head}-----`), left out, or encoded with
 * the rest, but its body is what makes it a key. Recognised:
 * - DER structures of private keys (PKCS#1 RSA, DSA, SEC1 EC, PKCS#8 plain and encrypted, PKCS#12)
 *   from their first bytes, whether the body is base64 (a PEM body line, a whole DER in base64),
 *   hex, byte literals or `\x` escapes;
 * - OpenSSH private keys (the `openssh-key-v1` magic), in base64 or as bytes;
 * - OpenPGP secret-key packets at the start of a base64 run (an armoured private key block).
 * A public key, a certificate or a signature has another structure and is never matched: a
 * public key is published, not a secret.
 * Text shapes of keys (PuTTY files, encrypted PEM headers, JWKs, .NET XML keys, `openssl -text`
 * dumps) are rules in `secrets.ts`.
 */

/** Where key material was found in a text: `[start, end)`. */
export interface KeySpan {
  readonly start: number;
  readonly end: number;
}

/** A DER header: tag, content length, where the content starts. Undefined when malformed or cut. */
function header(bytes: Uint8Array, at: number): { tag: number; length: number; body: number } | undefined {
  if (at + 2 > bytes.length) return undefined;
  const tag = bytes[at]!;
  let length = bytes[at + 1]!;
  let body = at + 2;
  if (length & 0x80) {
    const size = length & 0x7f;
    if (size === 0 || size > 3 || body + size > bytes.length) return undefined;
    length = 0;
    for (let i = 0; i < size; i++) length = length * 256 + bytes[body++]!;
    if (length < 128) return undefined; // DER writes short lengths in one byte
  }
  return { tag, length, body };
}

function startsWith(bytes: Uint8Array, at: number, prefix: readonly number[]): boolean {
  if (at + prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}

const SEQUENCE = 0x30;
const INTEGER = 0x02;
const OCTET_STRING = 0x04;
const OID = 0x06;
/** 1.2.840.113549.1.7.1 (PKCS#7 data): what a PKCS#12 file's content is. */
const PKCS7_DATA = [0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01];
/** 1.2.840.113549.1.5 (PKCS#5) and 1.2.840.113549.1.12 (PKCS#12): the password-based encryptions an encrypted PKCS#8 key names. */
const PASSWORD_ENCRYPTION = [
  [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x05],
  [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x0c],
];
/** The smallest private key DER: an Ed25519 or X25519 key in PKCS#8 (46 bytes of content). */
const MIN_KEY_LENGTH = 40;

/**
 * True when `bytes` start with the DER of a private key:
 * - PKCS#1 RSA and DSA: SEQUENCE { INTEGER 0 (or 1), INTEGER of 64 bytes or more, … };
 * - PKCS#8: SEQUENCE { INTEGER 0 (or 1), SEQUENCE { OID, … }, OCTET STRING };
 * - SEC1 EC: SEQUENCE { INTEGER 1, OCTET STRING of 16–72 bytes, [0] or [1] … };
 * - PKCS#12: SEQUENCE { INTEGER 3, SEQUENCE { OID pkcs7-data, … } };
 * - encrypted PKCS#8: SEQUENCE { SEQUENCE { OID of a PKCS#5 or PKCS#12 encryption, … }, … }.
 * Only the first few dozen bytes are needed: a PEM body's first line holds 48.
 */
export function isPrivateKeyDer(bytes: Uint8Array): boolean {
  const outer = header(bytes, 0);
  if (!outer || outer.tag !== SEQUENCE || outer.length < MIN_KEY_LENGTH) return false;
  const first = header(bytes, outer.body);
  if (!first) return false;
  if (first.tag === SEQUENCE) {
    const oid = header(bytes, first.body);
    return oid?.tag === OID && PASSWORD_ENCRYPTION.some((prefix) => startsWith(bytes, oid.body, prefix));
  }
  if (first.tag !== INTEGER || first.length !== 1) return false;
  const version = bytes[first.body];
  const next = header(bytes, first.body + 1);
  if (version === undefined || !next) return false;
  if ((version === 0 || version === 1) && next.tag === INTEGER && next.length >= 64) return true;
  if ((version === 0 || version === 1) && next.tag === SEQUENCE && bytes[next.body] === OID) {
    const after = next.body + next.length;
    return after >= bytes.length || bytes[after] === OCTET_STRING;
  }
  if (version === 1 && next.tag === OCTET_STRING && next.length >= 16 && next.length <= 72) {
    const after = next.body + next.length;
    return after >= bytes.length || bytes[after] === 0xa0 || bytes[after] === 0xa1;
  }
  return version === 3 && next.tag === SEQUENCE && startsWith(bytes, next.body, PKCS7_DATA);
}

/** `openssh-key-v1\0`, the first bytes of an OpenSSH private key (public keys are written `ssh-ed25519 AAAA…`). */
const OPENSSH_MAGIC = [...Buffer.from('openssh-key-v1\0', 'latin1')];
/** The magic in base64, as a key file's body begins. */
const OPENSSH_MAGIC_BASE64 = 'b3BlbnNzaC1rZXktdjE';
/** OpenPGP algorithms whose keys are MPIs (RSA, Elgamal, DSA) and those whose keys start with a curve OID (ECDH, ECDSA, EdDSA), RFC 9580 §9.1. */
const PGP_MPI_ALGORITHMS = new Set([1, 2, 3, 16, 17]);
const PGP_CURVE_ALGORITHMS = new Set([18, 19, 22]);
/** RFC 9580's fixed-size key algorithms (X25519, X448, Ed25519, Ed448) in version 6 keys, and the size of their public keys. */
const PGP_FIXED_ALGORITHMS = new Map([
  [25, 32],
  [26, 56],
  [27, 32],
  [28, 57],
]);
/** The longest secret-key packet (a 16384-bit RSA key's is about 9 KB). */
const PGP_LONGEST = 1 << 16;
/** Key creation times a real key has: 1990 to 2100. */
const PGP_EARLIEST = 0x25800000;
const PGP_LATEST = 0xf4865700;

const uint32 = (bytes: Uint8Array, at: number): number => (((bytes[at] ?? 0) << 24) >>> 0) + ((bytes[at + 1] ?? 0) << 16) + ((bytes[at + 2] ?? 0) << 8) + (bytes[at + 3] ?? 0);

/**
 * True when `bytes` start with an OpenPGP secret-key packet (tag 5, old or new format), 64 bytes
 * to 64 KB long: version 4 (or 5, 6 with its key-material length), a creation time between 1990
 * and 2100, and public key material of its algorithm's form — an MPI whose bit count matches its
 * first byte and the packet's length, or a curve OID. (A public key block starts with tag 6.)
 */
export function isPgpSecretKey(bytes: Uint8Array): boolean {
  const first = bytes[0];
  if (first === undefined || (first & 0x80) === 0) return false;
  let at: number;
  let length: number;
  if (first & 0x40) {
    if ((first & 0x3f) !== 5) return false;
    const octet = bytes[1] ?? 0;
    if (octet < 192) [at, length] = [2, octet];
    else if (octet < 224) [at, length] = [3, ((octet - 192) << 8) + (bytes[2] ?? 0) + 192];
    else if (octet === 255) [at, length] = [6, uint32(bytes, 2)];
    else return false;
  } else {
    if (((first >> 2) & 0x0f) !== 5) return false;
    const size = [1, 2, 4][first & 3];
    if (size === undefined) return false;
    at = 1 + size;
    length = 0;
    for (let i = 1; i < at; i++) length = length * 256 + (bytes[i] ?? 0);
  }
  const version = bytes[at];
  const time = uint32(bytes, at + 1);
  const algorithm = bytes[at + 5] ?? -1;
  if (length < 64 || length > PGP_LONGEST || time < PGP_EARLIEST || time > PGP_LATEST) return false;
  let key = at + 6;
  if (version === 5 || version === 6) {
    const material = uint32(bytes, key);
    if (material < 32 || material > length) return false;
    key += 4;
    const fixed = PGP_FIXED_ALGORITHMS.get(algorithm);
    if (fixed !== undefined) return version === 6 && material === fixed;
  } else if (version !== 4) {
    return false;
  }
  if (PGP_MPI_ALGORITHMS.has(algorithm)) {
    const bits = ((bytes[key] ?? 0) << 8) | (bytes[key + 1] ?? 0);
    const top = bytes[key + 2] ?? 0;
    // An MPI's first byte holds exactly its top bit; a secret key packet holds several numbers that size.
    return bits >= 512 && bits <= 16_384 && top >> ((bits - 1) % 8) === 1 && length >= (3 * bits) / 8;
  }
  if (PGP_CURVE_ALGORITHMS.has(algorithm)) {
    const oid = bytes[key] ?? 0;
    return oid >= 3 && oid <= 10 && (bytes[key + 1] === 0x2b || bytes[key + 1] === 0x2a);
  }
  return false;
}

/** True when bytes (decoded from base64, hex or byte literals) begin a private key. */
export function isKeyMaterial(bytes: Uint8Array): boolean {
  return bytes[0] === SEQUENCE ? isPrivateKeyDer(bytes) : startsWith(bytes, 0, OPENSSH_MAGIC) || isPgpSecretKey(bytes);
}

/** Base64 characters decoded to judge a run: a PEM body line (64), room for every header checked. */
const JUDGED_CHARS = 64;
/** Shortest base64 run judged as an OpenSSH or OpenPGP body (a key's first line is 64 or 70). */
const MIN_BODY_RUN = 64;

/**
 * The first base64 character of a run that may begin a key, or -1: `M` + `A`–`I` (a DER
 * SEQUENCE: 0x30 then a length), the OpenSSH magic, `l` or `x` (an OpenPGP secret-key packet).
 * A run right after an escaped line end (`\n` in a JSON or C string) starts one character later.
 */
function keyLead(text: string, run: Run): number {
  let at = run.start;
  if (at > 0 && text.charCodeAt(at - 1) === 92 && 'nrt'.includes(text[at]!)) at++;
  const lead = text[at];
  const second = text.charCodeAt(at + 1);
  if (lead === 'M' && second >= 65 && second <= 73) return at;
  if (run.end - at < MIN_BODY_RUN) return -1;
  if (lead === 'b' && text.startsWith(OPENSSH_MAGIC_BASE64, at)) return at;
  return lead === 'l' || lead === 'x' ? at : -1;
}

/**
 * Key material in a text: base64 runs whose first bytes begin a private key (see `keyLead` for
 * the cheap test each run passes first), and byte strings the text writes otherwise (`byteRuns`)
 * that do. `first`: stop at the first one.
 */
export function findKeyMaterial(text: string, runs: readonly Run[], bytes: readonly ByteRun[], first: boolean): KeySpan[] {
  const out: KeySpan[] = [];
  for (const run of runs) {
    const at = keyLead(text, run);
    if (at < 0) continue;
    const judged = text.slice(at, at + Math.min(JUDGED_CHARS, (run.end - at) & ~3));
    if (!isKeyMaterial(Buffer.from(judged, 'base64'))) continue;
    out.push({ start: at, end: run.end });
    if (first) return out;
  }
  for (const run of bytes) {
    if (!isKeyMaterial(run.bytes)) continue;
    out.push({ start: run.start, end: run.end });
    if (first) return out;
  }
  return out;
}
