#!/usr/bin/env python3
"""Vendor gitleaks' default rule list as data for repodex's credential detection.

Reads config/gitleaks.toml and the rule generators (cmd/generate/config/rules/*.go, for each
rule's own literal examples) from a checkout of github.com/gitleaks/gitleaks, converts every
regular expression from Go's RE2 syntax to JavaScript's, and writes
src/safety/rules/gitleaks.json with the source version and licence.

Usage: python3 scripts/vendor-gitleaks-rules.py <gitleaks checkout> <version, e.g. v8.30.0> <commit>

RE2 → JavaScript: JavaScript (Node 20) has no inline flag groups, so `(?i)`, `(?i:…)` and
`(?-i:…)` are resolved here: a pattern that is case-insensitive throughout gets the `i` flag;
otherwise every letter in a case-insensitive part becomes a class of both cases (`a` → `[aA]`,
`[a-z]` → `[a-zA-Z]`). `(?s:…)` makes `.` match a newline (`[\\s\\S]`), `\\z` becomes `$`, POSIX
classes (`[:alnum:]`) are spelt out, and group names are dropped (the groups stay capturing).
"""
import json
import re
import sys
import tomllib
from pathlib import Path

POSIX = {'alnum': 'a-zA-Z0-9', 'alpha': 'a-zA-Z', 'digit': '0-9', 'lower': 'a-z', 'upper': 'A-Z', 'xdigit': '0-9a-fA-F', 'space': r'\s', 'word': r'\w', 'punct': r'!-\/:-@\[-`{-~'}


def swap_class_items(body: str) -> str:
    """Case counterparts for the letters and letter ranges of a class body (already JavaScript)."""
    extra = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == '\\':
            i += 2
            continue
        if i + 2 < len(body) and body[i + 1] == '-' and body[i + 2] != '\\':
            lo, hi = c, body[i + 2]
            if lo.isalpha() and hi.isalpha() and lo.isascii() and hi.isascii() and lo.islower() == hi.islower():
                extra.append(f'{lo.swapcase()}-{hi.swapcase()}')
            i += 3
            continue
        if c.isalpha() and c.isascii():
            extra.append(c.swapcase())
        i += 1
    return body + ''.join(extra)


def convert(pattern: str) -> tuple[str, str]:
    """A RE2 pattern as (JavaScript source, flags)."""
    flags = ''
    if pattern.startswith('(?i)') and '(?-i' not in pattern:
        flags = 'i'
        pattern = pattern[4:]
    out = []
    stack = []
    ci = False
    dotall = False
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == '\\':
            nxt = pattern[i + 1]
            if nxt == 'z':
                out.append('$')
            elif nxt == 'A':
                out.append('^')
            elif nxt in 'QEpPC':
                raise ValueError(f'unsupported escape \\{nxt} in {pattern}')
            else:
                out.append(c + nxt)
            i += 2
            continue
        if c == '[':
            j = i + 1
            body = []
            negate = ''
            if j < n and pattern[j] == '^':
                negate = '^'
                j += 1
            first = True
            while j < n and (pattern[j] != ']' or first):
                if pattern[j] == '\\':
                    body.append(pattern[j:j + 2])
                    j += 2
                elif pattern.startswith('[:', j):
                    end = pattern.index(':]', j)
                    body.append(POSIX[pattern[j + 2:end]])
                    j = end + 2
                elif pattern[j] == '[':
                    body.append('\\[')
                    j += 1
                else:
                    body.append(pattern[j])
                    j += 1
                first = False
            text = ''.join(body)
            if ci and not flags:
                text = swap_class_items(text)
            out.append(f'[{negate}{text}]')
            i = j + 1
            continue
        if c == '(':
            if pattern.startswith('(?', i):
                m = re.match(r'\(\?([a-zA-Z-]*)([:)])', pattern[i:])
                if m and (m.group(1) or m.group(2) == ':'):
                    spec, kind = m.group(1), m.group(2)
                    on, _, off = spec.partition('-')
                    new_ci = (ci or 'i' in on) and 'i' not in off
                    new_dotall = (dotall or 's' in on) and 's' not in off
                    if set(on + off) - set('is'):
                        raise ValueError(f'unsupported flags {spec} in {pattern}')
                    if kind == ')':
                        ci, dotall = new_ci, new_dotall
                        i += m.end()
                        continue
                    stack.append((ci, dotall))
                    ci, dotall = new_ci, new_dotall
                    out.append('(?:')
                    i += m.end()
                    continue
                m = re.match(r'\(\?P?<[A-Za-z_]\w*>', pattern[i:])
                if m:
                    stack.append((ci, dotall))
                    out.append('(')
                    i += m.end()
                    continue
                raise ValueError(f'unsupported group at {i} in {pattern}')
            stack.append((ci, dotall))
            out.append('(')
            i += 1
            continue
        if c == ')':
            ci, dotall = stack.pop()
            out.append(')')
            i += 1
            continue
        if c == '.' and dotall:
            out.append(r'[\s\S]')
            i += 1
            continue
        if c == '{':
            j = pattern.index('}', i)
            out.append(pattern[i:j + 1])
            i = j + 1
            continue
        if ci and not flags and c.isascii() and c.isalpha():
            out.append(f'[{c}{c.swapcase()}]')
            i += 1
            continue
        out.append(c)
        i += 1
    if stack:
        raise ValueError(f'unbalanced groups in {pattern}')
    return ''.join(out), flags


def convert_list(patterns):
    return [dict(zip(('source', 'flags'), convert(p))) for p in patterns or []]


GO_STRING = re.compile(r'`([^`]*)`|"((?:[^"\\\n]|\\.)*)"', re.S)


def go_unquote(match) -> str:
    if match.group(1) is not None:
        return match.group(1)
    return json.loads('"' + match.group(2).replace("\\'", "'") + '"')


def literal_examples(rules_dir: Path) -> dict:
    """Each rule id's true-positive examples written as plain string literals in its generator."""
    examples = {}
    for path in sorted(rules_dir.glob('*.go')):
        source = path.read_text()
        for func in re.split(r'\nfunc ', source)[1:]:
            ids = re.findall(r'RuleID:\s*"([^"]+)"', func)
            if len(ids) != 1:
                continue
            found = []
            # The true positives are written before the false positives (`fps`): never read past them.
            positives = func.split('fps :=')[0].split('fps = ')[0]
            for region in re.finditer(r'\btps\s*(?::=|=)\s*(?:\[\]string\{|append\(tps,)(.*?)(?:\n\t\}|\n\t\))', positives, re.S):
                body = region.group(1)
                for item in GO_STRING.finditer(body):
                    before = body[:item.start()].rstrip()
                    after = body[item.end():].lstrip()
                    # A literal that is an element of its own, not part of a generated expression.
                    if not (before == '' or before.endswith(',') or before.endswith('{')) or not (after == '' or after.startswith(',')):
                        continue
                    line_start = body.rfind('\n', 0, item.start())
                    if body[line_start + 1:item.start()].strip().startswith('//'):
                        continue
                    found.append(go_unquote(item))
            if found:
                examples.setdefault(ids[0], []).extend(found)
    return examples


def main() -> None:
    checkout = Path(sys.argv[1])
    version = sys.argv[2] if len(sys.argv) > 2 else 'unknown'
    commit = sys.argv[3] if len(sys.argv) > 3 else 'unknown'
    config = tomllib.loads((checkout / 'config/gitleaks.toml').read_text())
    examples = literal_examples(checkout / 'cmd/generate/config/rules')
    rules = []
    for rule in config['rules']:
        if 'regex' not in rule:
            continue  # a rule on file names only (.p12/.pfx): the denylist covers those
        source, flags = convert(rule['regex'])
        out = {'id': rule['id'], 'source': source, 'flags': flags, 'keywords': [k.lower() for k in rule.get('keywords', [])]}
        if 'entropy' in rule:
            out['entropy'] = rule['entropy']
        if 'secretGroup' in rule:
            out['secretGroup'] = rule['secretGroup']
        if 'path' in rule:
            out['path'] = dict(zip(('source', 'flags'), convert(rule['path'])))
        allowlists = []
        for allow in rule.get('allowlists', []):
            allowlists.append({
                'target': allow.get('regexTarget', 'secret'),
                'condition': allow.get('condition', 'OR'),
                'regexes': convert_list(allow.get('regexes')),
                'stopwords': [w.lower() for w in allow.get('stopwords', [])],
                'paths': convert_list(allow.get('paths')),
            })
        if allowlists:
            out['allowlists'] = allowlists
        if rule['id'] in examples:
            out['examples'] = examples[rule['id']]
        rules.append(out)
    allow = config.get('allowlist', {})
    data = {
        'source': 'https://github.com/gitleaks/gitleaks config/gitleaks.toml (rule examples from cmd/generate/config/rules)',
        'version': version,
        'commit': commit,
        'license': (checkout / 'LICENSE').read_text(),
        'converted': 'by scripts/vendor-gitleaks-rules.py: RE2 syntax rewritten for JavaScript; rules on file names only left out',
        'global': {'regexes': convert_list(allow.get('regexes')), 'stopwords': [w.lower() for w in allow.get('stopwords', [])]},
        'rules': rules,
    }
    target = Path(__file__).resolve().parent.parent / 'src/safety/rules/gitleaks.json'
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=1, ensure_ascii=False) + '\n')
    print(f'{len(rules)} rules, {sum(len(r.get("examples", [])) for r in rules)} examples for {sum(1 for r in rules if r.get("examples"))} rules → {target}')


if __name__ == '__main__':
    main()
