import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';

/**
 * N11: change detection compared size and mtime only, so a same-size edit whose mtime was put back
 * (`cp -p`, `rsync -a`, `tar x`, `touch -r`) was invisible: status said clean, search served the
 * old identifier with no `stale` flag, outline served the old declarations "from the index".
 */
describe('N11: a same-size edit with its mtime restored is seen', () => {
  it('status says stale, search finds the new name, outline parses the new content', () => {
    const root = makeRepo({ 'a.ts': 'export function sameSizeAlpha() { return 1; }\n' });
    const pinned = new Date('2020-01-01T00:00:00Z');
    utimesSync(join(root, 'a.ts'), pinned, pinned);
    expect(runCli(['sync', '--root', root]).code).toBe(0);
    writeFileSync(join(root, 'a.ts'), 'export function sameSizeOmega() { return 1; }\n');
    utimesSync(join(root, 'a.ts'), pinned, pinned);

    const status = runCli(['status', '--json', '--indexing=off', '--root', root]).json<{ state: string; dirty: boolean; changes: { modified: number } }>();
    expect(status).toMatchObject({ state: 'stale', dirty: true, changes: { modified: 1 } });

    const outline = runCli(['outline', 'a.ts', '--json', '--root', root]).json<{ source: string; symbols: { name: string }[] }>();
    expect(outline.symbols.map((symbol) => symbol.name)).toEqual(['sameSizeOmega']);
    expect(outline.source).toBe('parse');

    const search = runCli(['search', 'sameSizeOmega', '--json', '--root', root]).json<{ results: { path: string; snippet: string }[]; synced?: { files_scanned: number } }>();
    expect(search.synced?.files_scanned).toBe(1);
    expect(search.results[0]).toMatchObject({ path: 'a.ts' });
    expect(search.results[0]!.snippet).toContain('sameSizeOmega');
  });
});
