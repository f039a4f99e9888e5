import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type JsonLayout, checkJsonBytes, checkedJsonText, readCheckedJson } from './checked-json.js';

const LAYOUTS: JsonLayout[] = ['pretty', 'compact', 'line'];

/** JSON bodies as repodex writes them: objects with a few fields of every JSON type. */
const bodies = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 8 }).filter((key) => key !== 'checksum' && key !== '__proto__'),
  fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 })),
  { minKeys: 1, maxKeys: 6 },
);

describe('checked JSON', () => {
  it('property: reads back what it wrote, in every layout', () => {
    fc.assert(
      fc.property(bodies, fc.constantFrom(...LAYOUTS), (body, layout) => {
        const bytes = Buffer.from(checkedJsonText(body, layout), 'utf8');
        expect(checkJsonBytes(bytes, layout)).toBeUndefined();
        expect(readCheckedJson(bytes, 'x.json', layout)).toEqual(JSON.parse(JSON.stringify(body)));
      }),
      { numRuns: 300 },
    );
  });

  it('property: every single changed byte is caught, anywhere (the checksum itself included)', () => {
    fc.assert(
      fc.property(bodies, fc.constantFrom(...LAYOUTS), fc.nat(), fc.integer({ min: 1, max: 255 }), (body, layout, position, mask) => {
        const bytes = Buffer.from(checkedJsonText(body, layout), 'utf8');
        const at = position % bytes.length;
        bytes[at]! ^= mask;
        expect(checkJsonBytes(bytes, layout), `byte ${at}`).toBeDefined();
        expect(() => readCheckedJson(bytes, 'x.json', layout)).toThrow(/x\.json is damaged/);
      }),
      { numRuns: 2000 },
    );
  });

  it('catches edits that leave the parsed value equal', () => {
    const text = checkedJsonText({ count: 1, name: 'A' }, 'compact');
    for (const edited of [text.replace('"count":1', '"count":1.0'), text.replace('"A"', '"\\u0041"'), text.replace('{', '{ ')]) {
      expect(JSON.parse(edited)).toEqual(JSON.parse(text));
      expect(checkJsonBytes(Buffer.from(edited), 'compact')).toBeDefined();
    }
  });

  it('still reads meta.json as earlier versions wrote it (a numeric checksum over the value), and catches damage in it', () => {
    const body = { format_version: 3, generation: 7 };
    const text = `${JSON.stringify({ ...body, checksum: crc32(Buffer.from(JSON.stringify(body, null, 2))) }, null, 2)}\n`;
    expect(readCheckedJson(Buffer.from(text), 'meta.json')).toEqual(body);
    expect(() => readCheckedJson(Buffer.from(text.replace('7', '8')), 'meta.json')).toThrow(/meta\.json is damaged: checksum mismatch/);
    expect(() => readCheckedJson(Buffer.from(text.replace(': 3', ':  3')), 'meta.json')).toThrow(/its bytes differ/);
  });
});
