import { describe, expect, it } from 'vitest';
import { base64Runs, byteRuns, derive, joinedLiterals } from './literal-views.js';

const viewText = (text: string): string => derive(text).views.map((view) => view.text).join('');

describe('joined literals', () => {
  it('joins literals across +, commas, line breaks and comments, and decodes their escapes', () => {
    expect(joinedLiterals('const k = "abcdefgh" +\n  // note\n  "ijklmnopqr";\n')?.text).toBe('abcdefghijklmnopqr\n');
    expect(joinedLiterals('KEY = (\n  "abcdefgh"  # a\n  "ijklmnop"\n)\n')?.text).toBe('abcdefghijklmnop\n');
    expect(joinedLiterals('{"k": "line one\\nline two!"}')?.text).toBe('line one\nline two!\n');
  });

  it('remembers constants and puts their values where a later value names them', () => {
    const cases: [string, string][] = [
      ['const a = "ghp_Zq8Xc2Lm4N";\nexport const tok = `${a}p6Rs8Tv0Wx`;\n', 'ghp_Zq8Xc2Lm4Np6Rs8Tv0Wx'],
      ['prefix = "ghp_Zq8Xc2Lm4N"\nTOKEN = f"{prefix}p6Rs8Tv0Wx"\n', 'ghp_Zq8Xc2Lm4Np6Rs8Tv0Wx'],
      ['prefix = "ghp_Zq8Xc2Lm4N"\nTOKEN = "#{prefix}p6Rs8Tv0Wx"\n', 'ghp_Zq8Xc2Lm4Np6Rs8Tv0Wx'],
      ['<?php\n$prefix = "ghp_Zq8Xc2Lm4N";\n$t = "{$prefix}p6Rs8Tv0Wx";\n', 'ghp_Zq8Xc2Lm4Np6Rs8Tv0Wx'],
      ['const prefix = "ghp_Zq8Xc2Lm4N"\nvar t = prefix + "p6Rs8Tv0Wx"\n', 'ghp_Zq8Xc2Lm4Np6Rs8Tv0Wx'],
      ['static final String P = "ghp_Zq8Xc2Lm4N";\nstatic final String T = "p6Rs8Tv0Wx" + P;\n', 'p6Rs8Tv0Wxghp_Zq8Xc2Lm4N'],
      ['#define PREFIX "ghp_Zq8Xc2Lm4N"\nstatic const char *t = PREFIX "p6Rs8Tv0Wx";\n', 'ghp_Zq8Xc2Lm4Np6Rs8Tv0Wx'],
      ['const string Prefix = "ghp_Zq8Xc2Lm4N";\nstring T => $"{Prefix}p6Rs8Tv0Wx";\n', 'ghp_Zq8Xc2Lm4Np6Rs8Tv0Wx'],
      ['const head: string = "PRIVATE KEY";\nconst pem = `-----BEGIN RSA ${head}-----`;\n', '-----BEGIN RSA PRIVATE KEY-----'],
    ];
    for (const [text, value] of cases) expect(joinedLiterals(text)?.text.split('\n'), text).toContain(value);
  });

  it('joins nothing that only compares with, or calls with, a literal', () => {
    expect(joinedLiterals('if (a == "abcdefghijklmnop") f("qrstuvwxyz0123456");\n')).toBeUndefined();
  });
});

describe('bytes written as hex, byte literals and escapes', () => {
  it('decodes hex runs, 0x lists, signed decimal lists and \\x escapes; hex that is text becomes a view', () => {
    const text = Buffer.from('-----BEGIN something secret-----\n').toString('hex');
    expect(viewText(`const h = "${text}";\n`)).toContain('-----BEGIN something secret-----');
    const bytes = [0x30, 0x82, 0x04, 0xa4, 0x02, 0x01, 0x00, 0x02, 0x82, 0x01, 0x01, 0x00, 0xc3, 0x1f, 0x7e, 0x99];
    for (const written of [
      `{ ${bytes.map((byte) => `0x${byte.toString(16)}`).join(', ')} }`,
      `new byte[] { ${bytes.map((byte) => (byte > 127 ? byte - 256 : byte)).join(', ')} }`,
      `[${bytes.map((byte) => `(byte) 0x${byte.toString(16)}`).join(', ')}]`,
      `&[${bytes.map((byte) => `0x${byte.toString(16)}u8`).join(', ')}]`,
      `b"${bytes.map((byte) => `\\x${byte.toString(16).padStart(2, '0')}`).join('')}"`,
    ]) {
      const runs = byteRuns(written, base64Runs(written));
      expect(runs.map((run) => [...run.bytes.subarray(0, 16)]), written).toContainEqual(bytes);
    }
  });

  it('reads no byte list out of ordinary numbers', () => {
    expect(byteRuns('const sizes = [1, 2, 3, 48, 5];\nconst x = 0x30;\n', [])).toEqual([]);
  });
});
