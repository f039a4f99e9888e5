/**
 * A map that keeps at most `capacity` entries, forgetting the least recently used first: for
 * answers a long-running process works out again and again from the same input (a path's
 * denylist verdict, a served file's credential verdict), where recomputing costs more than a
 * lookup and the input space is unbounded. With `weigh`, the capacity bounds the entries' total
 * weight instead of their number (decoded posting lists, by their length).
 */
export class RecentMap<K, V> {
  private readonly entries = new Map<K, V>();
  private weight = 0;

  constructor(
    private readonly capacity: number,
    private readonly weigh: (value: V) => number = () => 1,
  ) {}

  /** The value kept for `key` (now the most recently used), or undefined. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.forget(key);
    const weight = this.weigh(value);
    if (weight > this.capacity) return;
    this.entries.set(key, value);
    this.weight += weight;
    while (this.weight > this.capacity) this.forget(this.entries.keys().next().value!);
  }

  private forget(key: K): void {
    if (!this.entries.has(key)) return;
    this.weight -= this.weigh(this.entries.get(key) as V);
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
