import type { Language } from '../scan/language.js';
import type { ChunkParams, ChunkSpan, ChunkStrategy } from './chunker.js';

/**
 * Where a top-level declaration starts, per language family. Only lines with no indentation are
 * tested, so the patterns stay simple; nested structure is the tree-sitter chunker's job.
 */
const DECLARATION: Partial<Record<Language, RegExp>> = {
  typescript: /^(export\s+)?(default\s+)?(declare\s+)?(abstract\s+)?(async\s+)?(function|class|interface|type|enum|const|let|var|namespace|module)\b|^(describe|it|test)(\.\w+)?\(/,
  tsx: /^(export\s+)?(default\s+)?(declare\s+)?(abstract\s+)?(async\s+)?(function|class|interface|type|enum|const|let|var|namespace|module)\b|^(describe|it|test)(\.\w+)?\(/,
  javascript: /^(export\s+)?(default\s+)?(async\s+)?(function|class|const|let|var)\b|^(module\.)?exports\b|^(describe|it|test)(\.\w+)?\(/,
  python: /^(async\s+)?(def|class)\s/,
  go: /^(func|type|var|const)\b/,
  rust: /^(pub(\([^)]*\))?\s+)?(async\s+)?(unsafe\s+)?(fn|struct|enum|trait|impl|mod|const|static|type|union|macro_rules!)/,
  java: /^(public|private|protected|static|final|abstract|sealed|class|interface|enum|record)\b/,
  kotlin: /^(public|private|protected|internal|open|abstract|sealed|data|class|interface|object|fun|val|var|enum)\b/,
  scala: /^(final\s+|sealed\s+|abstract\s+|case\s+|implicit\s+)*(class|object|trait|def|val|var|type)\b/,
  swift: /^(public|private|internal|open|fileprivate|final)?\s*(class|struct|enum|protocol|extension|func|let|var)\b/,
  csharp: /^(public|private|protected|internal|static|sealed|abstract|partial|class|interface|enum|struct|record|namespace)\b/,
  c: /^(static\s+|extern\s+|inline\s+)*(struct|enum|union|typedef|[A-Za-z_][\w\s*]*\()/,
  cpp: /^(template|namespace|class|struct|enum|union|typedef|using|static\s|extern\s|inline\s|[A-Za-z_][\w\s*&:<>,]*\()/,
  ruby: /^(class|module|def)\s/,
  php: /^(abstract\s+|final\s+)?(function|class|interface|trait|enum)\b/,
  shell: /^(function\s+\w+|\w+\s*\(\)\s*\{?)/,
  markdown: /^#{1,6}\s/,
  sql: /^(create|alter|insert|select|with|drop)\b/i,
  toml: /^\[/,
  yaml: /^[A-Za-z_][\w.-]*:/,
};

const LEADING = /^\s*(\/\/|\/\*|\*|#|@|--|;|"""|''')/;
const CLOSER = /^[\])}]/;

/** Boundary strengths: the higher, the better a place to start a chunk. */
const enum Strength {
  None = 0,
  Indented = 1,
  Paragraph = 2,
  Declaration = 3,
}

/** How much a stronger boundary may pull a cut away from the target length, in lines per strength step. */
const PULL = 40;

/**
 * Blank-line and declaration-boundary segmentation (seed 000 §3.4, SPEC §2): cut near
 * `target_lines`, preferring top-level declarations (with their leading comments and decorators),
 * then paragraph breaks; never exceed `max_lines`; where no boundary exists, fall back to line
 * windows that overlap by `overlap_lines`.
 */
export const textChunker: ChunkStrategy = {
  name: 'text',
  version: 1,
  chunk(lines: readonly string[], language: Language, params: ChunkParams): ChunkSpan[] {
    const n = lines.length;
    const blank = lines.map((line) => line.trim() === '');
    const strength = boundaryStrengths(lines, blank, DECLARATION[language]);
    const spans: ChunkSpan[] = [];
    let pos = 0;
    while (pos < n) {
      while (pos < n && blank[pos]) pos++;
      if (pos >= n) break;
      let last = n - 1;
      while (blank[last]) last--;
      const remaining = last - pos + 1;
      let next: number;
      let overlap = false;
      if (remaining <= params.max_lines && remaining <= Math.ceil(params.target_lines * 1.5)) {
        next = last + 1;
      } else {
        const cut = bestCut(strength, pos, Math.min(n - 1, pos + params.max_lines), params.target_lines);
        if (cut !== undefined) {
          next = cut;
        } else if (remaining <= params.max_lines) {
          next = last + 1;
        } else {
          next = pos + params.max_lines;
          overlap = true;
        }
      }
      let end = next - 1;
      while (end > pos && blank[end]) end--;
      spans.push({ startLine: pos + 1, endLine: end + 1 });
      // Line windows overlap so that text across a forced cut is still found together.
      pos = overlap ? Math.max(pos + 1, next - params.overlap_lines) : next;
    }
    return spans;
  },
};

function boundaryStrengths(lines: readonly string[], blank: readonly boolean[], declaration: RegExp | undefined): Uint8Array {
  const n = lines.length;
  const strength = new Uint8Array(n);
  for (let i = 1; i < n; i++) {
    if (blank[i]) continue;
    const line = lines[i]!;
    const topLevel = line.charCodeAt(0) !== 32 && line.charCodeAt(0) !== 9;
    if (topLevel && declaration?.test(line)) {
      // Keep leading comments and decorators with the declaration they describe.
      let start = i;
      while (start > 1 && !blank[start - 1] && LEADING.test(lines[start - 1]!)) start--;
      if (start > 0) strength[start] = Math.max(strength[start]!, Strength.Declaration);
      continue;
    }
    const afterBlank = blank[i - 1]!;
    const afterCloser = !blank[i - 1] && CLOSER.test(lines[i - 1]!);
    if (topLevel && (afterBlank || afterCloser) && !CLOSER.test(line)) strength[i] = Math.max(strength[i]!, Strength.Paragraph);
    else if (afterBlank) strength[i] = Math.max(strength[i]!, Strength.Indented);
  }
  return strength;
}

/** The best next-chunk start in (pos, limit]: strongest boundary, then closest to the target length. */
function bestCut(strength: Uint8Array, pos: number, limit: number, target: number): number | undefined {
  const minStart = pos + Math.min(8, Math.floor(target / 4));
  let best: number | undefined;
  let bestScore = -Infinity;
  for (let i = minStart; i <= limit; i++) {
    const s = strength[i]!;
    if (s === Strength.None) continue;
    const score = s * PULL - Math.abs(i - (pos + target));
    if (score > bestScore) {
      bestScore = score;
      best = i;
    }
  }
  return best;
}
