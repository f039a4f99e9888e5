import { describe, expect, it } from 'vitest';
import { mulberry32 as random } from '../core/prng.js';
import { roundScore, selectTop } from './select.js';

/**
 * Scores as ranking leaves them before selection: many exact ties, many that differ only past
 * the ninth decimal (equal once rounded, as bm25 sums of the same terms in another order are),
 * and many sitting on either side of a rounding step's midpoint.
 */
function scores(n: number, next: () => number): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const base = Math.floor(next() * 8) / 4 + Math.floor(next() * 20) / 1e9;
    const kind = i % 4;
    out[i] = kind === 0 ? base : kind === 1 ? base + (next() - 0.5) * 1e-12 : kind === 2 ? base + 0.5e-9 + (next() - 0.5) * 1e-15 : next() * 1.5;
  }
  return out;
}

describe('selectTop', () => {
  it('with rounding, picks exactly what rounding every score first would pick, in the same order', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const next = random(seed);
      const n = 500 + Math.floor(next() * 3000);
      const raw = scores(n, next);
      const order = Uint32Array.from({ length: n }, (_, i) => i).sort(() => next() - 0.5);
      const count = Math.floor(n * (0.3 + 0.7 * next()));
      const candidates = Uint32Array.from({ length: count }, (_, i) => (i * 7919) % n);
      const limit = [1, 5, 20, 80, 320, count][seed % 6]!;
      const rounded = raw.map(roundScore);
      const expected = selectTop(candidates, count, rounded, order, limit);
      const working = raw.slice();
      const got = selectTop(candidates, count, working, order, limit, true);
      expect(got, `seed ${seed}`).toEqual(expected);
      // What it picked is left rounded, as the caller reads it.
      for (const id of got) expect(working[id]).toBe(rounded[id]);
    }
  });

  it('orders ties by the tie-break order, and never returns more than it was given', () => {
    const s = new Float64Array([1, 2, 2, 2, 0.5]);
    const order = new Uint32Array([0, 3, 1, 2, 4]);
    expect(selectTop(Uint32Array.from([0, 1, 2, 3, 4]), 5, s, order, 3)).toEqual([2, 3, 1]);
    expect(selectTop(Uint32Array.from([4, 0]), 2, s, order, 10)).toEqual([0, 4]);
    expect(selectTop(Uint32Array.from([4, 0]), 0, s, order, 10)).toEqual([]);
  });

  it('rounding twice changes nothing (a selection may meet a score it rounded before)', () => {
    const next = random(7);
    for (let i = 0; i < 10_000; i++) {
      const x = next() * 200;
      expect(roundScore(roundScore(x))).toBe(roundScore(x));
    }
  });
});
