import { describe, expect, it } from 'vitest';
import { RecentMap } from './recent-map.js';

describe('RecentMap', () => {
  it('keeps at most its capacity, forgetting the least recently used (a read counts as a use)', () => {
    const map = new RecentMap<string, number>(3);
    map.set('a', 1);
    map.set('b', 2);
    map.set('c', 3);
    expect(map.get('a')).toBe(1); // a is now the most recent: b is the oldest
    map.set('d', 4);
    expect(map.size).toBe(3);
    expect(map.get('b')).toBeUndefined();
    expect([map.get('a'), map.get('c'), map.get('d')]).toEqual([1, 3, 4]);
    map.set('c', 30); // a new value replaces the old one and is the most recent
    map.set('e', 5);
    expect(map.get('a')).toBeUndefined();
    expect([map.get('c'), map.get('d'), map.get('e')]).toEqual([30, 4, 5]);
  });

  it('keeps falsy values (false, 0, null) as answers', () => {
    const map = new RecentMap<string, boolean | number | null>(4);
    map.set('f', false);
    map.set('z', 0);
    map.set('n', null);
    expect([map.get('f'), map.get('z'), map.get('n'), map.get('missing')]).toEqual([false, 0, null, undefined]);
  });

  it('with a weight, bounds the total weight: the oldest go until the new entry fits, and one heavier than the whole capacity is not kept', () => {
    const map = new RecentMap<string, number[]>(10, (value) => value.length);
    map.set('a', [1, 2, 3, 4]);
    map.set('b', [1, 2, 3]);
    map.set('c', [1, 2, 3]);
    expect(map.size).toBe(3); // weight 10
    map.set('d', [1, 2]); // 12: a goes
    expect(map.get('a')).toBeUndefined();
    expect([map.get('b')?.length, map.get('c')?.length, map.get('d')?.length]).toEqual([3, 3, 2]);
    map.set('b', [1]); // replacing b frees its old weight: 6, nothing goes
    expect(map.size).toBe(3);
    map.set('huge', new Array(11).fill(0));
    expect(map.get('huge')).toBeUndefined();
    expect(map.size).toBe(3);
    map.set('e', new Array(9).fill(0)); // 15 → the oldest (c, then d) go: b and e remain, weight 10
    expect([map.get('c'), map.get('d')]).toEqual([undefined, undefined]);
    expect([map.get('b')?.length, map.get('e')?.length]).toEqual([1, 9]);
  });
});
