import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TOPICS, makeRepo } from '../helpers.js';

/**
 * Shared by the damage regression tests: a new repository the builtin embedder can learn from (72
 * small one-topic files, two functions each: enough chunks), plus `copies` identical copies of the
 * first file (repeated chunks).
 */
export function topicRepo(copies = 0): string {
  const files: Record<string, string> = {};
  for (let f = 0; f < 72; f++) {
    const words = TOPICS[f % TOPICS.length]!;
    files[`src/${words[0]}/mod${f}.ts`] = [0, 1]
      .map((i) => {
        const [a, b, c, d] = [words[(i + f) % 6]!, words[(i + f + 1) % 6]!, words[(i + f + 2) % 6]!, words[(i + f + 3) % 6]!];
        return `/** Handles the ${a} and ${b} of a ${c}. */\nexport function ${a}${b[0]!.toUpperCase()}${b.slice(1)}${f}_${i}(${c}: number, ${d}: string): string {\n  // the ${d} decides the ${b}\n  return ${d}.repeat(${c}) + '${b}';\n}\n`;
      })
      .join('\n');
  }
  for (let c = 0; c < copies; c++) files[`dupes/copy${c}.ts`] = files['src/upload/mod0.ts']!;
  return makeRepo(files);
}

/** XOR one byte of a file under `.repodex/` with `mask`. */
export function flipByte(root: string, name: string, at: number, mask = 0x40): void {
  const path = join(root, '.repodex', name);
  const bytes = readFileSync(path);
  bytes[at]! ^= mask;
  writeFileSync(path, bytes);
}
