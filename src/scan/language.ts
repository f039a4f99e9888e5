/** Language of a file, from its extension; `text` for anything else that is indexed. */
export const LANGUAGES = [
  'text', 'typescript', 'tsx', 'javascript', 'python', 'go', 'rust', 'java', 'kotlin', 'c', 'cpp',
  'csharp', 'ruby', 'php', 'swift', 'scala', 'shell', 'markdown', 'json', 'yaml', 'toml', 'sql',
] as const;

/** A language id as stored in the index (its position in LANGUAGES is the on-disk byte). */
export type Language = (typeof LANGUAGES)[number];

const BY_EXTENSION: Readonly<Record<string, Language>> = {
  '.ts': 'typescript', '.mts': 'typescript', '.cts': 'typescript', '.tsx': 'tsx',
  '.js': 'javascript', '.jsx': 'javascript', '.mjs': 'javascript', '.cjs': 'javascript',
  '.py': 'python', '.pyi': 'python', '.go': 'go', '.rs': 'rust', '.java': 'java', '.kt': 'kotlin', '.kts': 'kotlin',
  '.c': 'c', '.h': 'c', '.cc': 'cpp', '.cpp': 'cpp', '.cxx': 'cpp', '.hpp': 'cpp', '.hh': 'cpp', '.hxx': 'cpp',
  '.cs': 'csharp', '.rb': 'ruby', '.php': 'php', '.swift': 'swift', '.scala': 'scala',
  '.sh': 'shell', '.bash': 'shell', '.zsh': 'shell', '.md': 'markdown', '.markdown': 'markdown',
  '.json': 'json', '.yaml': 'yaml', '.yml': 'yaml', '.toml': 'toml', '.sql': 'sql',
};

/** The extension of a path, lower-cased, with its dot (`''` when there is none). */
export function extensionOf(path: string): string {
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  if (dot <= slash + 1) return ''; // no dot, or a dotfile such as `.bashrc`
  return path.slice(dot).toLowerCase();
}

/** Language of a path by extension. */
export function languageOf(path: string): Language {
  return BY_EXTENSION[extensionOf(path)] ?? 'text';
}

/** On-disk byte for a language. */
export function languageCode(language: Language): number {
  return LANGUAGES.indexOf(language);
}

/** Language for an on-disk byte (unknown bytes from a newer writer read as `text`). */
export function languageFromCode(code: number): Language {
  return LANGUAGES[code] ?? 'text';
}
