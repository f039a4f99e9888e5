import type { Op } from './schemas.js';

/**
 * The response cap (`max_total_bytes_per_response`, seed 002 §7.3), applied the same way on every
 * front end: an answer whose JSON is longer than the cap loses items from the end of its main list
 * (results, lines, files, excerpts, symbols; the oldest audit entries), is marked `truncated`, and
 * a warning says what was cut and how to get the rest.
 */

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');

/** Keep the longest prefix (or suffix) of `items` that fits `room` bytes; `items` is JSON-encoded one by one. */
function fitting<T>(items: readonly T[], room: number, fromEnd = false): number {
  let used = 0;
  let kept = 0;
  const order = fromEnd ? [...items].reverse() : items;
  for (const item of order) {
    used += bytes(item) + 1; // the comma
    if (used > room) break;
    kept++;
  }
  return kept;
}

/** What fitting did: the answer (possibly cut) and, when cut, a warning for the caller. */
export interface Fitted<T> {
  readonly data: T;
  readonly warning: string | undefined;
  /** `data` as JSON, when it fit as it was: measuring it made the text a front end would send. */
  readonly json?: string;
}

type Data = Record<string, unknown>;

/** Cut `data` (the answer of `op`) to at most `maxBytes` of JSON. Answers that fit are returned as they are. */
export function fitResponse<T>(op: Op, data: T, maxBytes: number): Fitted<T> {
  const json = JSON.stringify(data) ?? '';
  // No multi-byte character makes a text longer in bytes than 3 × its UTF-16 length: most answers need no count.
  const size = json.length * 3 <= maxBytes ? json.length : Buffer.byteLength(json, 'utf8');
  if (size <= maxBytes) return { data, warning: undefined, json };
  const record = data as unknown as Data;
  const over = `the answer (${size} bytes) is over max_total_bytes_per_response (${maxBytes} bytes)`;
  const cut = (field: string, fromEnd: boolean, extra: (kept: number, total: number) => Data): { kept: number; total: number; data: T } => {
    const list = record[field] as unknown[];
    const room = maxBytes - bytes({ ...record, [field]: [] }) - 64; // 64: the fields `extra` adds
    const kept = Math.max(0, fitting(list, room, fromEnd));
    const slice = fromEnd ? list.slice(list.length - kept) : list.slice(0, kept);
    return { kept, total: list.length, data: { ...record, [field]: slice, ...extra(kept, list.length) } as T };
  };
  switch (op) {
    case 'search': {
      const result = cut('results', false, () => ({}));
      const warnings = [...((record.warnings as string[]) ?? []), `${over}: cut to ${result.kept} of ${result.total} results; ask for fewer with top_k or narrow with glob`];
      return { data: { ...(result.data as Data), warnings } as T, warning: warnings.at(-1) };
    }
    case 'open': {
      const result = cut('lines', false, (kept) => ({ truncated: true, end_line: (record.start_line as number) + kept - 1, next_start: (record.start_line as number) + kept }));
      const next = (record.start_line as number) + result.kept;
      return { data: result.data, warning: `${over}: cut to ${result.kept} lines; continue with start_line ${next}` };
    }
    case 'fetch': {
      // Lines come off the last chunks first: every requested chunk keeps its header.
      const chunks = (record.chunks as Data[]).map((chunk) => ({ ...chunk }));
      for (let i = chunks.length - 1; i >= 0 && bytes({ ...record, chunks }) > maxBytes; i--) {
        const chunk = chunks[i]!;
        if (!Array.isArray(chunk.lines)) continue;
        const room = maxBytes - bytes({ ...record, chunks: chunks.map((other, j) => (j === i ? { ...other, lines: [] } : other)) }) - 32;
        const kept = fitting(chunk.lines as string[], room);
        chunks[i] = { ...chunk, lines: (chunk.lines as string[]).slice(0, kept), truncated: true };
      }
      const warnings = [...((record.warnings as string[]) ?? []), `${over}: chunk lines were cut; fetch one id at a time, or read the rest with open`];
      return { data: { ...record, chunks, warnings } as T, warning: warnings.at(-1) };
    }
    case 'files': {
      const result = cut('files', false, () => ({ truncated: true }));
      return { data: result.data, warning: `${over}: listed ${result.kept} of ${result.total} files; narrow with glob or lower limit` };
    }
    case 'outline': {
      const result = cut('symbols', false, () => ({ truncated: true }));
      return { data: result.data, warning: `${over}: listed ${result.kept} of ${result.total} symbols; open the file to read the rest` };
    }
    case 'bundle': {
      const fitted = fitBundle(record, maxBytes);
      const shortened = fitted.shortened === undefined ? '' : `, the last cut to ${fitted.shortened} lines`;
      const warnings = [...((record.warnings as string[]) ?? []), `${over}: kept ${fitted.kept} of ${fitted.total} excerpts${shortened}; ask for a smaller max_lines or max_files`];
      return { data: { ...fitted.data, warnings } as T, warning: warnings.at(-1) };
    }
    case 'audit': {
      const result = cut('entries', true, () => ({ truncated: true }));
      return { data: result.data, warning: `${over}: kept the newest ${result.kept} of ${result.total} entries; ask with a smaller limit or a later since` };
    }
    default: {
      // status, sync, verify: only their lists of problems can grow; shorten the longest.
      const lists = Object.entries(record).filter(([, value]) => Array.isArray(value)) as [string, unknown[]][];
      const longest = lists.sort((a, b) => bytes(b[1]) - bytes(a[1]))[0];
      if (!longest) return { data, warning: undefined };
      const result = cut(longest[0], false, () => ({}));
      return { data: result.data, warning: `${over}: ${longest[0]} cut to ${result.kept} of ${result.total}` };
    }
  }
}

/**
 * A bundle cut to the cap: excerpts whole, in rank order, while they fit; the first that does not
 * fit keeps the lines that do (long lines, minified code, can make one excerpt bigger than the whole
 * cap: it is shortened, not dropped); the rest are left out and listed in `omitted`. `used` counts
 * what is left.
 */
function fitBundle(record: Data, maxBytes: number): { data: Data; kept: number; total: number; shortened: number | undefined } {
  const excerpts = record.excerpts as Data[];
  const omitted = record.omitted as Data[];
  // Room for the warning and the `omitted` entries the cut adds.
  const dropped = excerpts.map((excerpt) => ({ path: excerpt.path, reason: `response cap (${maxBytes} bytes): ${String(excerpt.citation)} left out` }));
  let room = maxBytes - bytes({ ...record, excerpts: [], omitted: [...omitted, ...dropped] }) - 256;
  const kept: Data[] = [];
  let shortened: number | undefined;
  for (const excerpt of excerpts) {
    const size = bytes(excerpt) + 1;
    if (size <= room) {
      kept.push(excerpt);
      room -= size;
      continue;
    }
    const lines = excerpt.lines as string[];
    const fit = fitting(lines, room - bytes({ ...excerpt, lines: [], citation: `${String(excerpt.citation)}000000` }) - 1);
    if (fit > 0) {
      const start = excerpt.start_line as number;
      const end = start + fit - 1;
      kept.push({ ...excerpt, lines: lines.slice(0, fit), end_line: end, citation: `${String(excerpt.path)}:${start}-${end}`, truncated: true });
      shortened = fit;
    }
    break;
  }
  const leftOut = dropped.slice(kept.length);
  const used = { files: new Set(kept.map((excerpt) => excerpt.path)).size, lines: kept.reduce((sum, excerpt) => sum + (excerpt.lines as string[]).length, 0) };
  return { data: { ...record, excerpts: kept, omitted: [...omitted, ...leftOut], used }, kept: kept.length, total: excerpts.length, shortened };
}
