import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArtifactFile } from '../../src/index/format.js';
import { runCli } from '../helpers.js';
import { flipByte, topicRepo } from './damage-fixtures.js';

interface Status {
  state: string;
  damage: string[];
}

function status(root: string): Status {
  const run = runCli(['status', '--json', '--root', root]);
  // Before: a damaged LINE, SNIP or CHSH section made status --json exit 1 instead of answering.
  expect(run.code, run.stderr).toBe(0);
  return run.json<Status>();
}

describe('N9: status reports what verify finds', () => {
  it('N9: a damaged parse cache, vector manifest or segment section is damage in the status answer', () => {
    const root = topicRepo();
    expect(runCli(['sync', '--embeddings', 'builtin', '--root', root]).code).toBe(0);
    const dataDir = join(root, '.repodex');
    const save = (name: string): (() => void) => {
      const bytes = readFileSync(join(dataDir, name));
      return () => writeFileSync(join(dataDir, name), bytes);
    };
    expect(status(root).damage).toEqual([]);

    // The parse cache: before, status said "ready (clean)".
    let restore = save('parse-cache.rpdx');
    flipByte(root, 'parse-cache.rpdx', Math.floor(readFileSync(join(dataDir, 'parse-cache.rpdx')).length / 2), 0x01);
    expect(runCli(['verify', '--root', root]).code).toBe(1);
    expect(status(root).damage.join('\n')).toMatch(/parse-cache\.rpdx is damaged/);
    const human = runCli(['status', '--root', root]).stdout;
    expect(human).not.toContain('ready (clean)');
    expect(human).toMatch(/state\s+ready, but damaged \(see below\)[\s\S]*damaged:\n {2}- parse-cache\.rpdx is damaged/);
    restore();

    // The vector manifest, edited as in the report (a count one higher): verify and status both see it.
    restore = save('vectors/manifest.json');
    const manifest = join(dataDir, 'vectors/manifest.json');
    writeFileSync(manifest, readFileSync(manifest, 'utf8').replace(/"vectors": (\d+)/, (_, n: string) => `"vectors": ${Number(n) + 1}`));
    expect(runCli(['verify', '--root', root]).code).toBe(1);
    expect(status(root).damage.join('\n')).toMatch(/vectors\/manifest\.json is damaged/);
    restore();

    // A byte in the SNIP section of the segment.
    restore = save('seg-1.rpdx');
    const segment = ArtifactFile.open(join(dataDir, 'seg-1.rpdx'), 'seg-1.rpdx', 'SEGM');
    const snip = segment.layout.entries.find((entry) => entry.tag === 'SNIP')!;
    segment.close();
    flipByte(root, 'seg-1.rpdx', snip.offset + Math.floor(snip.length / 2), 0x01);
    expect(runCli(['verify', '--root', root]).code).toBe(1);
    const snipped = status(root);
    expect(snipped.damage.join('\n')).toMatch(/seg-1\.rpdx: section SNIP checksum mismatch/);
    expect(snipped.state).toBe('stale');
    restore();
    expect(status(root).damage).toEqual([]);
  });
});
