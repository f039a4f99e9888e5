import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';

/** A repository synced, with `.repodex/checked.json` written by a status (files old enough for their times to tell a change). */
async function checkedRepository(): Promise<{ root: string; path: string }> {
  const root = makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', 'src/a.ts': 'export function alpha(): number {\n  return 1;\n}\n' });
  expect(runCli(['sync', '--root', root]).code).toBe(0);
  // A check vouches only for files older than the clock's granularity (RACY_NS, 2 s): no change can hide in their times.
  await new Promise((resolve) => setTimeout(resolve, 2_100));
  runCli(['status', '--root', root]);
  const path = join(root, '.repodex', 'checked.json');
  expect(readFileSync(path, 'utf8')).toMatch(/^\{"version":1,"files":\{"seg-1\.rpdx":.*"checksum":"[0-9a-f]{8}"\}\n$/);
  return { root, path };
}

/** Flip one bit of `path` at `at`. */
function flip(path: string, at: number): void {
  const bytes = readFileSync(path);
  bytes[at]! ^= 0x04;
  writeFileSync(path, bytes);
}

describe('M10: a bit flipped in .repodex/checked.json is seen', () => {
  it('M10: verify names checked.json as checked, and names it damaged, with what that means', async () => {
    const { root, path } = await checkedRepository();
    expect(runCli(['verify', '--root', root]).stdout).toMatch(/index sound: generation 1, \d+ files checked \(.*checked\.json/);
    const length = readFileSync(path).length;
    for (const at of [2, Math.floor(length / 2), length - 4]) {
      flip(path, at);
      const verify = runCli(['verify', '--root', root]);
      expect(verify.code, verify.stdout).toBe(1);
      expect(verify.stdout).toMatch(/checked\.json is damaged: (checksum mismatch|its checksum (field is missing or out of place|is unreadable)) \(it records which files a check found sound; it is not used, and the next check writes it again\)/);
      // That check wrote it again: sound now.
      expect(runCli(['verify', '--root', root]).code).toBe(0);
    }
  });

  it('M10: status names it too, once: the check that found it writes it again', async () => {
    const { root, path } = await checkedRepository();
    flip(path, 40);
    const status = runCli(['status', '--root', root, '--json']);
    expect(status.json<{ damage: string[] }>().damage.join('\n')).toMatch(/checked\.json is damaged/);
    expect(runCli(['status', '--root', root, '--json']).json<{ damage: string[] }>().damage).toEqual([]);
  });

  it('M10: a record an older repodex wrote (no checksum) is not taken for damage, only not trusted', async () => {
    const { root, path } = await checkedRepository();
    writeFileSync(path, '{"seg-1.rpdx":"1:2:3:4"}\n');
    const verify = runCli(['verify', '--root', root]);
    expect(verify.code, verify.stdout).toBe(0);
    expect(verify.stdout).not.toContain('damaged');
  });
});
