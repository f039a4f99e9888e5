import { describe, expect, it } from 'vitest';
import { GITLEAKS_RULE_DATA, RULE_DATA, matchRules, shannonEntropy } from './rule-set.js';
import { KEYWORD_RULES } from './rules/shapes.js';

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

describe("repodex's additions in gitleaks' form", () => {
  it('decides every gitleaks rule that needs a keyword beside the token: bare (the token alone) or kept, with why', () => {
    const needsKeyword = GITLEAKS_RULE_DATA.filter((rule) => rule.source.startsWith(String.raw`[\w.-]{0,50}?(?:`)).map((rule) => rule.id);
    expect(needsKeyword.length).toBeGreaterThan(90);
    expect(Object.keys(KEYWORD_RULES).sort()).toEqual([...needsKeyword].sort());
    for (const [id, decision] of Object.entries(KEYWORD_RULES)) {
      if ('keep' in decision) expect(decision.keep.length, id).toBeGreaterThan(5);
      else for (const keyword of decision.keywords) expect(keyword, id).toBe(keyword.toLowerCase());
    }
  });

  it('finds a bare token without its keyword, under the rule id gitleaks gives it', () => {
    const cases: [string, string][] = [
      ['telegram-bot-api-token', `BOT = "7612345678:AA${'Hq3xT9vLm2Rk8Zw4Yb6NcP1dF5gJ7sQwE'}"`],
      ['mailchimp-api-key', `key = "${'cefa780880ba5f5696192a34f6292c35'}-us18"`],
      ['new-relic-user-api-key', `k = "NRAK-${'ABCDEFGHIJ0123456789KLMNOPQ'}"`],
      ['sonar-api-token', `t = "squ_${'0123456789abcdef0123456789abcdef01234567'}"`],
      ['plaid-api-token', 'x = "access-production-12345678-90ab-cdef-1234-567890abcdef"'],
      ['airtable-personnal-access-token', `t = "pat${'AbCdEfGhIjKlMn'}.${'0123456789abcdef'.repeat(4)}"`],
    ];
    for (const [id, text] of cases) expect(matchRules(`${text}\n`, undefined, false).map((match) => match.rule), id).toContain(id);
  });

  it('runs every addition as gitleaks runs its own: it compiles and has keywords in lower case', () => {
    const ids = new Set(GITLEAKS_RULE_DATA.map((rule) => rule.id));
    const added = RULE_DATA.slice(GITLEAKS_RULE_DATA.length);
    expect(added.length).toBeGreaterThan(20);
    for (const rule of added) {
      expect(() => new RegExp(rule.source, `${rule.flags}gd`), rule.id).not.toThrow();
      expect(rule.id.startsWith('repodex/') || ids.has(rule.id), rule.id).toBe(true);
      for (const keyword of rule.keywords) expect(keyword, rule.id).toBe(keyword.toLowerCase());
    }
  });
});
