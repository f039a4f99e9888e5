import picomatch from 'picomatch';

/**
 * Paths never indexed and never read, whatever the config says (SPEC §8, seed 002 §7.2): env
 * files and their editor backups, keys and certificates, SSH keys and folders, and the usual
 * credential stores of package managers, cloud CLIs, git and Terraform. Patterns without a slash
 * match the file name in any folder; matching ignores case.
 */
export const DEFAULT_DENYLIST = [
  // environment files, their variants and backups (.env.local, .env~, prod.env.bak, env.bak, .envrc)
  '.env', '.env.*', '.env~', '*.env.bak', '*.env~', 'env.bak', '.envrc',
  // keys and certificates
  '*.pem', '*.key', '*.pfx', '*.p12', '*.jks', '*.keystore',
  // SSH
  'id_rsa*', 'id_dsa*', 'id_ecdsa*', 'id_ed25519*', '.ssh', '**/.ssh/**',
  // credential stores
  '.npmrc', '.pypirc', '.netrc', '_netrc', '.git-credentials', '.pgpass', '.htpasswd', '**/.aws/credentials', '**/.docker/config.json',
  'credentials.json', '*.tfstate', '*.tfstate.backup',
  '**/secrets.*',
  '**/.git/**', '.git',
] as const;

/** Decides whether a repository-relative path is a secret that must never be indexed or served. */
export class Denylist {
  readonly patterns: readonly string[];
  private compiled: ((path: string) => boolean) | undefined;

  constructor(extra: readonly string[] = []) {
    this.patterns = [...DEFAULT_DENYLIST, ...extra];
  }

  /**
   * Compiled on first use: a no-change status or a search never needs it. Patterns without a slash
   * match the file name at any depth (`id_rsa` in any folder); patterns with one match the whole
   * path (picomatch's `basename` option would break `**` patterns, so the two kinds are compiled
   * apart). `nocase`: `.ENV` on a case-insensitive file system is the same secret.
   */
  private get matcher(): (path: string) => boolean {
    if (!this.compiled) {
      const names = this.patterns.filter((pattern) => !pattern.includes('/'));
      const paths = this.patterns.filter((pattern) => pattern.includes('/'));
      const byName = picomatch(names, { dot: true, basename: true, nocase: true });
      const byPath = paths.length > 0 ? picomatch(paths, { dot: true, nocase: true }) : () => false;
      this.compiled = (path) => byName(path) || byPath(path);
    }
    return this.compiled;
  }

  /** The first pattern a path matches, or undefined. The path is relative, with `/` separators. */
  match(path: string): string | undefined {
    if (!this.matcher(path)) return undefined;
    return this.patterns.find((pattern) => picomatch.isMatch(path, pattern, { dot: true, basename: !pattern.includes('/'), nocase: true }));
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
