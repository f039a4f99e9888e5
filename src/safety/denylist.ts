import picomatch from 'picomatch';
import { RecentMap } from '../core/recent-map.js';
import { credentialInName } from './secrets.js';

/**
 * Paths never indexed and never read, whatever the config says (SPEC §8): env files and their
 * editor backups, keys and certificates, SSH keys and folders, and the usual credential stores of
 * package managers, cloud and cluster CLIs, git, Terraform and Vault. Patterns without a slash
 * match the file name in any folder; matching ignores case and is done on the normalised name
 * (`normalizeDenylistPath`).
 */
export const DEFAULT_DENYLIST = [
  // environment files, their variants and backups (.env.local, .env~, prod.env.bak, env.bak, .envrc)
  '.env', '.env.*', '.env~', '*.env.bak', '*.env~', 'env.bak', '.envrc',
  // keys and certificates (PuTTY and Apple .p8 private keys too)
  '*.pem', '*.key', '*.pfx', '*.p12', '*.jks', '*.keystore', '*.ppk', '*.p8',
  // SSH
  'id_rsa*', 'id_dsa*', 'id_ecdsa*', 'id_ed25519*', '.ssh', '**/.ssh/**',
  // credential stores
  '.npmrc', '.pypirc', '.netrc', '_netrc', '.git-credentials', '.pgpass', '.htpasswd', '**/.aws/credentials', '**/.docker/config.json',
  '.dockercfg', '.my.cnf', '.s3cfg', '.boto', '**/.composer/auth.json', '**/.gem/credentials', '**/.cargo/credentials', '**/.cargo/credentials.toml',
  '**/.config/gh/hosts.yml', '**/.config/gcloud/**', '**/.azure/**',
  'credentials.json',
  // Kubernetes, Terraform and Vault: cluster tokens and client keys, variables where passwords live, state, CLI tokens
  '**/.kube/config', 'kubeconfig', '*.kubeconfig',
  '*.tfstate', '*.tfstate.backup', '*.tfvars', '*.auto.tfvars', '*.tfvars.json', '.terraformrc', 'terraform.rc', 'credentials.tfrc.json',
  '.vault-token',
  '**/secrets.*',
  '**/.git/**', '.git',
] as const;

/**
 * A path as the denylist judges it: backslashes are folder separators (a file literally named
 * `deploy\secrets.yml` is `deploy/secrets.yml` to Windows and to anyone who unzips it there), and
 * each name loses its trailing spaces and dots (Windows drops them: `.env ` and `.env.` open
 * `.env`). Case is folded by the matcher.
 */
export function normalizeDenylistPath(path: string): string {
  return path
    .split(/[\\/]+/)
    .map((segment) => segment.replace(/[ .]+$/, '') || segment)
    .filter((segment) => segment !== '')
    .join('/');
}

/**
 * True for a path whose names hold a backslash. Such a name (legal on Linux and macOS) is two
 * names on Windows and to every request that writes `\` as a separator, so the same request
 * could name two different files: such files are never indexed and never served.
 */
export function holdsBackslash(path: string): boolean {
  return path.includes('\\');
}

/** One case-insensitive expression that matches what any of the globs matches (each is anchored on its own). */
function anyOf(globs: readonly string[]): { test(text: string): boolean } {
  if (globs.length === 0) return { test: () => false };
  return new RegExp(globs.map((glob) => picomatch.makeRe(glob, { dot: true, nocase: true }).source).join('|'), 'i');
}

/**
 * Why a path is left out for its names: a name on the denylist (`pattern`), a name shaped like a
 * credential (`rule`: `tokens/ghp_….ts`), or a name holding a backslash.
 */
export type NameBlock =
  | { readonly kind: 'secret-name'; readonly pattern: string }
  | { readonly kind: 'credential-name'; readonly rule: string }
  | { readonly kind: 'backslash' };

/**
 * Decides whether a repository-relative path is a secret that must never be indexed or served:
 * a name on the denylist, or a name shaped like a credential (`credentialInName`), at any depth.
 */
export class Denylist {
  readonly patterns: readonly string[];
  private compiled: ((path: string) => boolean) | undefined;
  /** `blocks` answers by path: a server checks the same paths again and again, and the patterns never change. */
  private readonly verdicts = new RecentMap<string, boolean>(8192);

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
      // One expression per kind, not one per pattern: a walk asks for every file and folder.
      const byName = anyOf(this.patterns.filter((pattern) => !pattern.includes('/')));
      const byPath = anyOf(this.patterns.filter((pattern) => pattern.includes('/')));
      this.compiled = (path) => byName.test(path.slice(path.lastIndexOf('/') + 1)) || byPath.test(path);
    }
    return this.compiled;
  }

  /** Why a relative path (or a folder above it) is left out for its names, or undefined. */
  why(path: string): NameBlock | undefined {
    if (holdsBackslash(path)) return { kind: 'backslash' };
    const pattern = this.match(path);
    if (pattern !== undefined) return { kind: 'secret-name', pattern };
    for (const name of normalizeDenylistPath(path).split('/')) {
      const rule = credentialInName(name);
      if (rule) return { kind: 'credential-name', rule };
    }
    return undefined;
  }

  /** The first pattern a path (or a folder above it) matches, or undefined. The path is relative. */
  match(path: string): string | undefined {
    const normal = normalizeDenylistPath(path);
    const segments = normal.split('/');
    for (let i = segments.length; i >= 1; i--) {
      const prefix = segments.slice(0, i).join('/');
      if (!this.matcher(prefix)) continue;
      return this.patterns.find((pattern) => picomatch.isMatch(prefix, pattern, { dot: true, basename: !pattern.includes('/'), nocase: true }));
    }
    return undefined;
  }

  /**
   * True when the walk must leave the path out: its normalised form matches or its last name is
   * shaped like a credential (the walk already checked its folders on the way down), or a name in
   * it holds a backslash (`holdsBackslash`).
   */
  matches(path: string): boolean {
    if (holdsBackslash(path)) return true;
    const normal = normalizeDenylistPath(path);
    return this.matcher(normal) || credentialInName(normal.slice(normal.lastIndexOf('/') + 1)) !== undefined;
  }

  /** True when any segment of the normalised path (a folder or the file) is denylisted or shaped like a credential, or a name holds a backslash (answers are kept). */
  blocks(path: string): boolean {
    let verdict = this.verdicts.get(path);
    if (verdict === undefined) {
      verdict = this.blocksNow(path);
      this.verdicts.set(path, verdict);
    }
    return verdict;
  }

  private blocksNow(path: string): boolean {
    if (holdsBackslash(path)) return true;
    const normal = normalizeDenylistPath(path);
    if (this.matcher(normal)) return true;
    const segments = normal.split('/');
    for (let i = 1; i < segments.length; i++) {
      if (this.matcher(segments.slice(0, i).join('/'))) return true;
    }
    return segments.some((name) => credentialInName(name) !== undefined);
  }
}
