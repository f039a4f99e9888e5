/** A Uint32Array that grows by doubling; the index builder appends millions of numbers. */
export class GrowableU32 {
  private data: Uint32Array;
  length = 0;

  constructor(initial = 1024) {
    this.data = new Uint32Array(initial);
  }

  push(value: number): void {
    if (this.length === this.data.length) this.grow();
    this.data[this.length++] = value;
  }

  get(i: number): number {
    return this.data[i]!;
  }

  set(i: number, value: number): void {
    this.data[i] = value;
  }

  /** A view of the filled part (shares memory until the next push grows the array). */
  view(): Uint32Array {
    return this.data.subarray(0, this.length);
  }

  private grow(): void {
    const next = new Uint32Array(Math.max(1024, this.data.length * 2));
    next.set(this.data);
    this.data = next;
  }
}
