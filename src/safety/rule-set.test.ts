import { describe, expect, it } from 'vitest';
import { RULE_DATA, matchRules, shannonEntropy } from './rule-set.js';

describe("gitleaks' rule list as data", () => {
  it('compiles every rule, its path filter and its allowlists as JavaScript', () => {
    expect(RULE_DATA.length).toBeGreaterThan(200);
    for (const rule of RULE_DATA) {
      expect(() => new RegExp(rule.source, `${rule.flags}gd`), rule.id).not.toThrow();
      for (const allow of rule.allowlists ?? []) for (const pattern of [...allow.regexes, ...allow.paths]) expect(() => new RegExp(pattern.source, pattern.flags), rule.id).not.toThrow();
      expect(rule.keywords.length, rule.id).toBeGreaterThan(0);
    }
  });

  it("finds each rule's own examples (those gitleaks writes as literals)", () => {
    const checked = RULE_DATA.filter((rule) => rule.examples && !rule.path);
    expect(checked.length).toBeGreaterThan(40);
    for (const rule of checked) {
      for (const example of rule.examples!) {
        const found = matchRules(example, undefined, false).map((match) => match.rule);
        expect(found, `${rule.id}: ${example}`).toContain(rule.id);
      }
    }
  });

  it('judges entropy as gitleaks does, and ignores ordinary code', () => {
    expect(shannonEntropy('aaaa')).toBe(0);
    expect(shannonEntropy('abcd')).toBe(2);
    expect(matchRules('export function token(key: string): string { return key.trim(); }\n', 'src/a.ts', false)).toEqual([]);
    expect(matchRules('Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n', 'src/ws.ts', false)).toEqual([]);
  });
});
