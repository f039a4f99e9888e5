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
});
