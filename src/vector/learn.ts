import { RepodexError } from '../core/errors.js';
import { tokenize } from '../text/tokenizer.js';
import { StaticTable } from './static-table.js';

/** How a repository's own embedding table is learned. */
export interface LearnOptions {
  /** Vector length (default 128). */
  readonly dim?: number;
  /** Largest vocabulary kept, most widespread terms first (default 60,000). */
  readonly maxTerms?: number;
  /** Power iterations of the randomized SVD (default 1: a second moved no dev-set number and costs a third more). */
  readonly iterations?: number;
  /** Seed of the random projection, so a corpus always learns the same table. */
  readonly seed?: number;
}

/** Fewer chunks than this cannot teach co-occurrence; such a repository has no learned table. */
export const MIN_TRAINING_CHUNKS = 50;

/**
 * Learn term vectors from a repository's chunks by latent semantic analysis: the chunk × term
 * matrix (sublinear tf · idf, rows unit length) is factored by a randomized truncated SVD, and each
 * term's vector is its row of the right singular vectors. Terms that appear in the same chunks
 * (`upload`, `resume`, `chunk`, `offset`) end up near each other, so a query that names none of
 * a chunk's identifiers can still land near it. Everything comes from the repository itself:
 * nothing is downloaded. Deterministic for a given corpus and seed.
 */
export function learnTable(texts: readonly string[], options: LearnOptions = {}): StaticTable {
  const dim = options.dim ?? 128;
  if (texts.length < MIN_TRAINING_CHUNKS) throw new RepodexError('EMBEDDER_FAILED', `the builtin embedder learns from the repository's own code and needs at least ${MIN_TRAINING_CHUNKS} chunks; this index has ${texts.length}`);
  const docs = texts.map(termCounts);
  const df = new Map<string, number>();
  for (const doc of docs) for (const term of doc.keys()) df.set(term, (df.get(term) ?? 0) + 1);
  const n = docs.length;
  // A term in one chunk co-occurs with nothing; a term in most chunks says nothing.
  const vocab = [...df.entries()]
    .filter(([, count]) => count >= 2 && count <= n * 0.5)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, options.maxTerms ?? 60_000)
    .map(([term]) => term);
  const column = new Map(vocab.map((term, i) => [term, i]));
  const idf = new Float32Array(vocab.length);
  vocab.forEach((term, i) => (idf[i] = Math.log(n / df.get(term)!)));
  const matrix = csr(docs, column, idf);
  const rank = Math.min(dim, vocab.length - 1, n - 1);
  if (rank < 2) throw new RepodexError('EMBEDDER_FAILED', 'the repository has too few distinct terms for the builtin embedder to learn from');
  const right = truncatedSvd(matrix, vocab.length, rank, options.iterations ?? 1, options.seed ?? 0x5eed);
  // Pad to the requested dimension so every table of a configuration has the same length.
  const vectors = new Float32Array(vocab.length * dim);
  for (let t = 0; t < vocab.length; t++) for (let c = 0; c < rank; c++) vectors[t * dim + c] = right[t * rank + c]!;
  return new StaticTable(vocab, idf, vectors, dim);
}

function termCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of tokenize(text)) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}

/** A sparse matrix by rows. */
interface Csr {
  readonly rows: number;
  readonly start: Uint32Array;
  readonly cols: Uint32Array;
  readonly values: Float32Array;
}

/** The weighted chunk × term matrix, each row scaled to unit length. */
function csr(docs: readonly Map<string, number>[], column: ReadonlyMap<string, number>, idf: Float32Array): Csr {
  const start = new Uint32Array(docs.length + 1);
  const cols: number[] = [];
  const values: number[] = [];
  docs.forEach((doc, r) => {
    const from = cols.length;
    let norm = 0;
    for (const [term, tf] of doc) {
      const c = column.get(term);
      if (c === undefined) continue;
      const v = (1 + Math.log(tf)) * idf[c]!;
      cols.push(c);
      values.push(v);
      norm += v * v;
    }
    if (norm > 0) {
      const scale = 1 / Math.sqrt(norm);
      for (let i = from; i < values.length; i++) values[i]! *= scale;
    }
    start[r + 1] = cols.length;
  });
  return { rows: docs.length, start, cols: Uint32Array.from(cols), values: Float32Array.from(values) };
}

/** Y (rows × k) = A · M, where M is (A's columns × k), both dense row-major. */
function times(a: Csr, m: Float64Array, k: number): Float64Array {
  const out = new Float64Array(a.rows * k);
  for (let r = 0; r < a.rows; r++) {
    const base = r * k;
    for (let i = a.start[r]!; i < a.start[r + 1]!; i++) {
      const v = a.values[i]!;
      const from = a.cols[i]! * k;
      for (let c = 0; c < k; c++) out[base + c]! += v * m[from + c]!;
    }
  }
  return out;
}

/** Z (columns × k) = Aᵀ · Y, where Y is (rows × k). */
function timesTransposed(a: Csr, columns: number, y: Float64Array, k: number): Float64Array {
  const out = new Float64Array(columns * k);
  for (let r = 0; r < a.rows; r++) {
    const from = r * k;
    for (let i = a.start[r]!; i < a.start[r + 1]!; i++) {
      const v = a.values[i]!;
      const base = a.cols[i]! * k;
      for (let c = 0; c < k; c++) out[base + c]! += v * y[from + c]!;
    }
  }
  return out;
}

/**
 * Orthonormalize the columns of a tall row-major matrix in place (Cholesky QR, twice: the second
 * pass repairs what the first lost to rounding). A column that is numerically dependent on the
 * others comes out zero rather than blowing up.
 */
function orthonormalize(y: Float64Array, rows: number, k: number, passes = 2): void {
  for (let pass = 0; pass < passes; pass++) {
    const gram = gramOf(y, rows, k);
    const inverse = inverseCholeskyUpper(gram, k);
    // Transposed, so row j of it holds the weights of output column j (contiguous reads).
    const weights = new Float64Array(k * k);
    for (let i = 0; i < k; i++) for (let j = i; j < k; j++) weights[j * k + i] = inverse[i * k + j]!;
    for (let r = 0; r < rows; r++) {
      const base = r * k;
      // Output column j reads input columns i ≤ j only, so going down from the last column works in place.
      for (let j = k - 1; j >= 0; j--) {
        const w = j * k;
        let sum = 0;
        for (let i = 0; i <= j; i++) sum += y[base + i]! * weights[w + i]!;
        y[base + j] = sum;
      }
    }
  }
}

/** R⁻¹ for the upper Cholesky factor R of a symmetric positive semi-definite matrix (Gram = RᵀR). */
function inverseCholeskyUpper(gram: Float64Array, k: number): Float64Array {
  const r = new Float64Array(k * k);
  let scale = 0;
  for (let i = 0; i < k; i++) scale = Math.max(scale, gram[i * k + i]!);
  const floor = Math.max(scale, 1e-300) * 1e-12;
  for (let i = 0; i < k; i++) {
    let diag = gram[i * k + i]!;
    for (let p = 0; p < i; p++) diag -= r[p * k + i]! * r[p * k + i]!;
    if (diag <= floor) continue; // dependent column: its row of R stays zero and so does its output
    const d = Math.sqrt(diag);
    r[i * k + i] = d;
    for (let j = i + 1; j < k; j++) {
      let sum = gram[i * k + j]!;
      for (let p = 0; p < i; p++) sum -= r[p * k + i]! * r[p * k + j]!;
      r[i * k + j] = sum / d;
    }
  }
  // Invert the upper triangle by back substitution, column by column.
  const inv = new Float64Array(k * k);
  for (let j = 0; j < k; j++) {
    if (r[j * k + j] === 0) continue;
    inv[j * k + j] = 1 / r[j * k + j]!;
    for (let i = j - 1; i >= 0; i--) {
      if (r[i * k + i] === 0) continue;
      let sum = 0;
      for (let p = i + 1; p <= j; p++) sum += r[i * k + p]! * inv[p * k + j]!;
      inv[i * k + j] = -sum / r[i * k + i]!;
    }
  }
  return inv;
}

/** Eigen-decomposition of a small symmetric matrix by cyclic Jacobi rotations: eigenvalues descending, eigenvectors as columns. */
function symmetricEigen(matrix: Float64Array, k: number): { values: Float64Array; vectors: Float64Array } {
  const a = Float64Array.from(matrix);
  const v = new Float64Array(k * k);
  for (let i = 0; i < k; i++) v[i * k + i] = 1;
  for (let sweep = 0; sweep < 60; sweep++) {
    let off = 0;
    for (let p = 0; p < k; p++) for (let q = p + 1; q < k; q++) off += a[p * k + q]! ** 2;
    if (off < 1e-22) break;
    for (let p = 0; p < k; p++) {
      for (let q = p + 1; q < k; q++) {
        const apq = a[p * k + q]!;
        if (Math.abs(apq) < 1e-300) continue;
        const theta = (a[q * k + q]! - a[p * k + p]!) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let i = 0; i < k; i++) {
          const aip = a[i * k + p]!;
          const aiq = a[i * k + q]!;
          a[i * k + p] = c * aip - s * aiq;
          a[i * k + q] = s * aip + c * aiq;
        }
        for (let i = 0; i < k; i++) {
          const api = a[p * k + i]!;
          const aqi = a[q * k + i]!;
          a[p * k + i] = c * api - s * aqi;
          a[q * k + i] = s * api + c * aqi;
        }
        for (let i = 0; i < k; i++) {
          const vip = v[i * k + p]!;
          const viq = v[i * k + q]!;
          v[i * k + p] = c * vip - s * viq;
          v[i * k + q] = s * vip + c * viq;
        }
      }
    }
  }
  const order = [...Array(k).keys()].sort((x, y) => a[y * k + y]! - a[x * k + x]!);
  const values = Float64Array.from(order, (i) => a[i * k + i]!);
  const vectors = new Float64Array(k * k);
  order.forEach((from, to) => {
    for (let i = 0; i < k; i++) vectors[i * k + to] = v[i * k + from]!;
  });
  return { values, vectors };
}

/**
 * The top `rank` right singular vectors of A (rows × columns), as a (columns × rank) row-major
 * matrix: Halko, Martinsson and Tropp's randomized range finder with power iterations, then an
 * exact eigen-decomposition of the small projected problem.
 */
function truncatedSvd(a: Csr, columns: number, rank: number, iterations: number, seed: number): Float64Array {
  const k = Math.min(rank + 16, columns, a.rows);
  const random = gaussian(seed);
  const omega = new Float64Array(columns * k);
  for (let i = 0; i < omega.length; i++) omega[i] = random();
  let y = times(a, omega, k);
  // Inside the power iterations a basis only has to stay well conditioned (one pass); the last
  // one must be orthonormal for B = Qᵀ A to be exact (two passes).
  for (let it = 0; it < iterations; it++) {
    orthonormalize(y, a.rows, k, 1);
    const z = timesTransposed(a, columns, y, k);
    orthonormalize(z, columns, k, 1);
    y = times(a, z, k);
  }
  orthonormalize(y, a.rows, k);
  // B = Qᵀ A is (k × columns); its transpose Aᵀ Q is what we can form.
  const bt = timesTransposed(a, columns, y, k);
  const gram = gramOf(bt, columns, k);
  const { values, vectors } = symmetricEigen(gram, k);
  // Right singular vectors: V = Bᵀ W Σ⁻¹, keeping the top `rank`.
  const out = new Float64Array(columns * rank);
  const inverse = Float64Array.from({ length: rank }, (_, j) => (values[j]! > 1e-12 ? 1 / Math.sqrt(values[j]!) : 0));
  for (let c = 0; c < columns; c++) {
    const base = c * k;
    for (let j = 0; j < rank; j++) {
      let sum = 0;
      for (let i = 0; i < k; i++) sum += bt[base + i]! * vectors[i * k + j]!;
      out[c * rank + j] = sum * inverse[j]!;
    }
  }
  return out;
}

/** A seeded standard normal generator (xorshift32 + Box–Muller): the same corpus learns the same table. */
/** Mᵀ M (k × k, symmetric) of a row-major `rows` × k matrix: the upper triangle summed, then mirrored. */
function gramOf(m: Float64Array, rows: number, k: number): Float64Array {
  const gram = new Float64Array(k * k);
  for (let r = 0; r < rows; r++) {
    const base = r * k;
    for (let i = 0; i < k; i++) {
      const v = m[base + i]!;
      if (v === 0) continue;
      for (let j = i; j < k; j++) gram[i * k + j]! += v * m[base + j]!;
    }
  }
  for (let i = 0; i < k; i++) for (let j = 0; j < i; j++) gram[i * k + j] = gram[j * k + i]!;
  return gram;
}

function gaussian(seed: number): () => number {
  let state = seed >>> 0 || 1;
  const uniform = (): number => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return (state + 0.5) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}
