/**
 * A map that keeps at most `capacity` entries, forgetting the least recently used first: for
 * answers a long-running process works out again and again from the same input (a path's
 * denylist verdict, a served file's credential verdict), where recomputing costs more than a
 * lookup and the input space is unbounded.
 */
export class RecentMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  /** The value kept for `key` (now the most recently used), or undefined. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }
}
