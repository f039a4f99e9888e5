import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from '../helpers.js';

describe('N20: a query in another script is told what works', () => {
  it('N20: a Russian query with no results gets a hint to ask in English words or identifiers', () => {
    const root = makeRepo({ '.git/HEAD': 'ref: refs/heads/main\n', 'src/config.ts': 'export function loadConfig(path: string) {\n  return path;\n}\n' });
    const report = runCli(['search', 'где загружается конфигурация', '--root', root, '--json']).json<{ results: unknown[]; warnings: string[] }>();
    expect(report.results).toEqual([]);
    expect(report.warnings.join('\n')).toMatch(/English words or identifiers/);
    const human = runCli(['search', 'где загружается конфигурация', '--root', root]);
    expect(human.stdout).toMatch(/warning: .*English words or identifiers/);
    // An English query that finds nothing is not told to use English.
    const english = runCli(['search', 'zebra', '--root', root, '--json']).json<{ warnings: string[] }>();
    expect(english.warnings.join('\n')).not.toMatch(/English/);
  });
});
