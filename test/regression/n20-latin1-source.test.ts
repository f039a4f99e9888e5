import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';

/** Text as a Windows-1252 editor writes it (every character here is one byte there). */
function windows1252(text: string): Buffer {
  const high: Record<string, number> = { '€': 0x80, '’': 0x92 };
  return Buffer.from([...text].map((ch) => high[ch] ?? ch.charCodeAt(0)));
}

describe('N20: one Latin-1 byte no longer makes a source file binary', () => {
  it('N20: a file with Latin-1 comments is indexed, searchable and served decoded as Windows-1252; control bytes still make a file binary', () => {
    const root = makeRepo({
      '.git/HEAD': 'ref: refs/heads/main\n',
      'src/prix.ts': windows1252("// café: le prix en € (l’unité)\nexport function zqxlatinprice(amount: number) {\n  return `${amount} €`;\n}\n"),
      'src/blob.ts': Buffer.concat([Buffer.from('export const zqxblob = "'), Buffer.from([0xe9, 0x01, 0x02, 0x03, 0xff]), Buffer.from('";\n')]),
    });
    const sync = runCli(['sync', '--root', root, '--embeddings', 'off', '--json']).json<{ files_indexed: number; skipped_by_reason: Record<string, number> }>();
    expect(sync.files_indexed).toBe(1);
    expect(sync.skipped_by_reason).toEqual({ binary: 1 });
    const hits = runCli(['search', 'zqxlatinprice', '--root', root, '--json']).json<{ results: { path: string }[] }>().results;
    expect(hits.map((hit) => hit.path)).toEqual(['src/prix.ts']);
    const open = runCli(['open', 'src/prix.ts', '--root', root, '--json']).json<{ lines: string[] }>();
    expect(open.lines[0]).toBe('1| // café: le prix en € (l’unité)');
    expect(runCli(['search', 'zqxblob', '--root', root, '--json']).json<{ results: unknown[] }>().results).toEqual([]);
    expect(runCli(['open', 'src/blob.ts', '--root', root, '--json']).json<{ error: string }>().error).toMatch(/binary/);
  });
});
