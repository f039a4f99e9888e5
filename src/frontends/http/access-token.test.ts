import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultServerFolder, generatedTokenPath, isLoopback, loadOrCreateToken, readGeneratedToken } from './access-token.js';

const POSIX = process.platform !== 'win32';
const folders: string[] = [];

function freshFolder(): string {
  const base = mkdtempSync(join(tmpdir(), 'repodex-access-token-'));
  folders.push(base);
  return join(base, 'server');
}

afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describe('the generated token', () => {
  it('is made once, 256 bits in hex, readable by its owner only, and read back after', () => {
    const folder = freshFolder();
    const made = loadOrCreateToken(folder);
    expect(made.created).toBe(true);
    expect(made.token).toMatch(/^[0-9a-f]{64}$/);
    expect(made.path).toBe(generatedTokenPath(folder));
    expect(readFileSync(made.path, 'utf8')).toBe(`${made.token}\n`);
    if (POSIX) {
      expect(statSync(made.path).mode & 0o777).toBe(0o600);
      expect(statSync(folder).mode & 0o777).toBe(0o700);
    }
    expect(readdirSync(folder)).toEqual(['token']); // no temp file left beside it
    const again = loadOrCreateToken(folder);
    expect(again).toEqual({ token: made.token, path: made.path, created: false });
    expect(readGeneratedToken(folder)).toBe(made.token);
  });

  it.skipIf(!POSIX)('refuses a token file others may read, and one too short to be a token', () => {
    const folder = freshFolder();
    const { path } = loadOrCreateToken(folder);
    chmodSync(path, 0o640);
    expect(() => loadOrCreateToken(folder)).toThrow(/can be read by other users \(mode 640\).*chmod 600/);
    writeFileSync(path, 'short\n', { mode: 0o600 });
    chmodSync(path, 0o600);
    expect(() => loadOrCreateToken(folder)).toThrow(/holds a token of 5 characters/);
    expect(readGeneratedToken(folder)).toBeUndefined();
  });

  it('is looked for where the server keeps it by default, and only on loopback addresses', () => {
    expect(defaultServerFolder({ XDG_STATE_HOME: '/s', HOME: '/h' })).toBe(join('/s', 'repodex', 'server'));
    expect(defaultServerFolder({ HOME: '/h' })).toBe(join('/h', '.local', 'state', 'repodex', 'server'));
    expect(readGeneratedToken(freshFolder())).toBeUndefined();
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]']) expect(isLoopback(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'example.com', '127.0.0.1.example.com']) expect(isLoopback(host), host).toBe(false);
  });
});
