// Line framing, the one reader of every line-framed stream: the JSONL protocol on stdin, and a
// daemon's socket at both ends. Loads nothing (the daemon client's bundle holds node's own modules only).

/** One line of a stream: its bytes without the newline, or, for a line over the limit, its length and first bytes only. */
export type Line = { readonly kind: 'line'; readonly bytes: Buffer } | { readonly kind: 'oversized'; readonly length: number; readonly head: Buffer };

const EMPTY = Buffer.alloc(0);

/**
 * Splits a stream of bytes at each `\n`. A line longer than `maxBytes` is discarded as it streams
 * in, never buffered whole: what is kept of it is its length and its first `headBytes` bytes (for a
 * log line saying how it began). Chunks may end anywhere, inside a line or a UTF-8 character.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private over = false;
  private dropped = 0;
  private head: Buffer = EMPTY;
  private started = false;

  constructor(
    private readonly maxBytes = Number.POSITIVE_INFINITY,
    private readonly headBytes = 0,
  ) {}

  /** The lines `chunk` completes, in order. */
  push(chunk: Buffer | string): Line[] {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    const lines: Line[] = [];
    let start = 0;
    for (;;) {
      const newline = bytes.indexOf(10, start);
      const end = newline < 0 ? bytes.length : newline;
      this.take(bytes.subarray(start, end));
      if (newline < 0) return lines;
      lines.push(this.finish());
      start = newline + 1;
    }
  }

  /** The last line, when the stream ended inside one (a last line without its newline still counts). */
  end(): Line[] {
    return this.started ? [this.finish()] : [];
  }

  /** Whether the line being read is over the limit already (a reader that needs no answer to it may hang up now). */
  get overLimit(): boolean {
    return this.over;
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    this.started = true;
    if (this.over) {
      this.dropped += piece.length;
      if (this.head.length < this.headBytes) this.head = Buffer.concat([this.head, piece.subarray(0, this.headBytes - this.head.length)]);
    } else if (this.size + piece.length > this.maxBytes) {
      this.over = true; // read on to the newline, keeping nothing but the first bytes
      this.head = Buffer.concat([...this.parts, piece]).subarray(0, this.headBytes);
      this.dropped = this.size + piece.length;
      this.parts = [];
      this.size = 0;
    } else {
      this.parts.push(piece);
      this.size += piece.length;
    }
  }

  private finish(): Line {
    const line: Line = this.over ? { kind: 'oversized', length: this.dropped, head: this.head } : { kind: 'line', bytes: Buffer.concat(this.parts, this.size) };
    this.parts = [];
    this.size = 0;
    this.over = false;
    this.dropped = 0;
    this.head = EMPTY;
    this.started = false;
    return line;
  }
}
