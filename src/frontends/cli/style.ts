/** Minimal ANSI styling, on only when the stream is a terminal and NO_COLOR is unset. */
export interface Style {
  bold(text: string): string;
  dim(text: string): string;
  cyan(text: string): string;
  yellow(text: string): string;
  green(text: string): string;
  red(text: string): string;
}

const wrap = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;

/** Styling for a stream: real colors on a TTY, identity functions otherwise. */
export function styleFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): Style {
  const on = Boolean(stream.isTTY) && env.NO_COLOR === undefined && env.TERM !== 'dumb';
  if (!on) {
    const id = (text: string): string => text;
    return { bold: id, dim: id, cyan: id, yellow: id, green: id, red: id };
  }
  return { bold: wrap(1, 22), dim: wrap(2, 22), cyan: wrap(36, 39), yellow: wrap(33, 39), green: wrap(32, 39), red: wrap(31, 39) };
}

/** `12,345` */
export function formatCount(n: number): string {
  // Not toLocaleString: its first call loads ICU data, which costs a one-shot CLI ~10 ms.
  const digits = String(Math.trunc(Math.abs(n)));
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return n < 0 ? `-${grouped}` : grouped;
}

/** `1 file`, `12,345 files`: a count with its noun in the right number. */
export function formatNoun(n: number, noun: string, plural = `${noun}s`): string {
  return `${formatCount(n)} ${n === 1 ? noun : plural}`;
}

/** `1.2 MB` */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** `3 minutes ago` */
export function formatRelative(iso: string, now: number = Date.now()): string {
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  if (!Number.isFinite(seconds)) return iso;
  if (seconds < 5) return 'just now';
  const steps: [number, string][] = [
    [60, 'second'],
    [60, 'minute'],
    [24, 'hour'],
    [30, 'day'],
    [12, 'month'],
  ];
  let value = seconds;
  for (const [size, name] of steps) {
    if (value < size) return `${value} ${name}${value === 1 ? '' : 's'} ago`;
    value = Math.floor(value / size);
  }
  return `${value} year${value === 1 ? '' : 's'} ago`;
}

/** `1.6 s` or `85 ms` */
export function formatDuration(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}
