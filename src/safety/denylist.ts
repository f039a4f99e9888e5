import picomatch from 'picomatch';

/** Paths never indexed and never read, whatever the config says (SPEC §8, seed 002 §7.2). */
export const DEFAULT_DENYLIST = [
  '.env', '.env.*', '*.pem', '*.key', '*.pfx', '*.p12', 'id_rsa*', '**/secrets.*', '**/.git/**', '.git',
] as const;

/** Decides whether a repository-relative path is a secret that must never be indexed or served. */
export class Denylist {
  readonly patterns: readonly string[];
  private compiled: ((path: string) => boolean) | undefined;

  constructor(extra: readonly string[] = []) {
    this.patterns = [...DEFAULT_DENYLIST, ...extra];
  }

  /** Compiled on first use: a no-change status or a search never needs it. */
  private get matcher(): (path: string) => boolean {
    // basename: patterns without a slash match the file name at any depth (`id_rsa` in any folder).
    // nocase: `.ENV` on a case-insensitive file system is the same secret.
    this.compiled ??= picomatch([...this.patterns], { dot: true, basename: true, nocase: true });
    return this.compiled;
  }

  /** The first pattern a path matches, or undefined. The path is relative, with `/` separators. */
  match(path: string): string | undefined {
    if (!this.matcher(path)) return undefined;
    return this.patterns.find((pattern) => picomatch.isMatch(path, pattern, { dot: true, basename: true, nocase: true }));
  }

  /** True when the path itself matches (the walk already checked its folders on the way down). */
  matches(path: string): boolean {
    return this.matcher(path);
  }

  /** True when any segment of the path (a folder or the file) is denylisted. */
  blocks(path: string): boolean {
    if (this.matcher(path)) return true;
    const segments = path.split('/');
    for (let i = 1; i < segments.length; i++) {
      if (this.matcher(segments.slice(0, i).join('/'))) return true;
    }
    return false;
  }
}

const KEY_MARKER = '-----BEGIN ((RSA|DSA|EC|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY( BLOCK)?-----';
/** A PEM block as files hold it: the marker opens a line. */
const PEM_BLOCK = new RegExp(`(^|\n)[ \t]*${KEY_MARKER}`);
/** A PEM block embedded in a string (JSON, env-style config): the marker, an escaped newline, key material. */
const ESCAPED_BLOCK = new RegExp(`${KEY_MARKER}(\\\\r)?\\\\n[A-Za-z0-9+/=]{16,}`);

/**
 * True when text holds a private key: such a file is a secret whatever its name. Code that only
 * mentions the marker (a scanner, a test building a fixture) is not flagged: the marker must open
 * a line, or be followed by key material inside an escaped string.
 */
export function containsPrivateKey(text: string): boolean {
  return text.includes('PRIVATE KEY') && (PEM_BLOCK.test(text) || ESCAPED_BLOCK.test(text));
}
