import type { BundleReport } from './report.js';

/** A bundle as Markdown for people (`last_bundle.md`, `repodex bundle --format md`): citations, reasons, code. */
export function bundleMarkdown(bundle: BundleReport): string {
  const out: string[] = [];
  out.push(`# Context bundle ${bundle.bundle_id}`, '');
  out.push(`> ${bundle.prompt.replace(/\n/g, '\n> ')}`, '');
  out.push(
    `- strategy: ${bundle.strategy}; generation ${bundle.generation}${bundle.freshness.indexed_commit ? ` at ${bundle.freshness.indexed_commit.slice(0, 12)}` : ''}${bundle.freshness.dirty ? ' (stale)' : ''}`,
    `- budget: ${bundle.budget.max_files} files, ${bundle.budget.max_lines} lines${bundle.budget.include_tests ? ', tests included' : ', tests left out'}; used ${bundle.used.files} files, ${bundle.used.lines} lines`,
    `- prompt fingerprint: ${bundle.prompt_fingerprint}`,
    `- keywords: ${bundle.keywords.length > 0 ? bundle.keywords.map((keyword) => `\`${keyword}\``).join(', ') : '(none)'}`,
    '',
  );
  if (bundle.excerpts.length === 0) out.push('No excerpts: nothing in the index matched the prompt.', '');
  for (const excerpt of bundle.excerpts) {
    out.push(`## ${excerpt.citation}${excerpt.symbol ? ` — ${excerpt.symbol}` : ''}`, '');
    out.push(`_${excerpt.rationale}${excerpt.truncated ? ' (cut by the line budget)' : ''}_`, '');
    const fence = excerpt.lines.some((line) => line.includes('```')) ? '````' : '```';
    out.push(fence, ...excerpt.lines, fence, '');
  }
  if (bundle.omitted.length > 0) {
    out.push('## Left out', '');
    for (const item of bundle.omitted) out.push(`- ${item.path}: ${item.reason}`);
    out.push('');
  }
  return out.join('\n');
}
