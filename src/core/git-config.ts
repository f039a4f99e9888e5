import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { gitDirs } from './git.js';
import { readRegularText } from './open-regular.js';

/** Git config and ignore files larger than this are not read (no real one comes close). */
const MAX_GIT_FILE_BYTES = 1 << 20;
/** Include chains deeper than this are cut (git stops at 10 too). */
const MAX_INCLUDE_DEPTH = 10;

/** The environment the git files are found from (HOME, XDG_CONFIG_HOME, GIT_CONFIG_*). */
export type GitEnv = Readonly<Record<string, string | undefined>>;

function home(env: GitEnv): string {
  return env.HOME || homedir();
}

/** `~/x` → the home folder's x, as git expands paths in config values. */
function expandHome(path: string, env: GitEnv): string {
  return path === '~' ? home(env) : path.startsWith('~/') ? join(home(env), path.slice(2)) : path;
}

/** `$XDG_CONFIG_HOME/git/<name>`, or `~/.config/git/<name>` when the variable is unset or empty. */
function xdgGitPath(name: string, env: GitEnv): string {
  const base = env.XDG_CONFIG_HOME || join(home(env), '.config');
  return join(base, 'git', name);
}

/**
 * The value of one config line's right-hand side, as git reads it: surrounding blanks dropped,
 * `"…"` quoting, `\"` `\\` `\n` `\t` escapes, and a `#` or `;` outside quotes starting a comment.
 */
function parseValue(raw: string): string {
  let out = '';
  let quoted = false;
  let pendingSpace = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\' && i + 1 < raw.length) {
      const next = raw[++i]!;
      out += pendingSpace + (next === 'n' ? '\n' : next === 't' ? '\t' : next === 'b' ? '' : next);
      pendingSpace = '';
    } else if (c === '"') {
      out += pendingSpace;
      pendingSpace = '';
      quoted = !quoted;
    } else if (!quoted && (c === '#' || c === ';')) {
      break;
    } else if (!quoted && (c === ' ' || c === '\t')) {
      if (out !== '') pendingSpace += c;
    } else {
      out += pendingSpace + c;
      pendingSpace = '';
    }
  }
  return out;
}

/** One `section[.subsection].key = value` of a config file, names lower-cased as git compares them. */
interface ConfigEntry {
  readonly section: string;
  readonly subsection: string | undefined;
  readonly key: string;
  readonly value: string;
}

/** The entries of a git config file's text, in order. Lines git would reject are skipped. */
export function parseGitConfig(text: string): ConfigEntry[] {
  const entries: ConfigEntry[] = [];
  let section = '';
  let subsection: string | undefined;
  // Backslash-newline continues a value on the next line.
  const lines = text.replace(/\\\r?\n/g, '').split(/\r?\n/);
  for (const line of lines) {
    let rest = line.trimStart();
    if (rest === '' || rest.startsWith('#') || rest.startsWith(';')) continue;
    if (rest.startsWith('[')) {
      const header = /^\[\s*([A-Za-z0-9.-]+)\s*(?:"((?:[^"\\]|\\.)*)")?\s*\]/.exec(rest);
      if (!header) {
        section = '';
        continue;
      }
      const name = header[1]!.toLowerCase();
      // `[section.sub]` is the old spelling of `[section "sub"]`.
      const dot = name.indexOf('.');
      section = dot < 0 ? name : name.slice(0, dot);
      subsection = header[2] !== undefined ? header[2].replace(/\\(.)/g, '$1') : dot < 0 ? undefined : name.slice(dot + 1);
      rest = rest.slice(header[0].length).trimStart();
      if (rest === '' || rest.startsWith('#') || rest.startsWith(';')) continue;
    }
    if (section === '') continue;
    const pair = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$/.exec(rest);
    if (!pair) continue;
    // A key without `=` is boolean true.
    entries.push({ section, subsection, key: pair[1]!.toLowerCase(), value: pair[2] === undefined ? 'true' : parseValue(pair[2]) });
  }
  return entries;
}

/**
 * Every config file git reads for a repository, lowest priority first: system, global (XDG, then
 * `~/.gitconfig`, or GIT_CONFIG_GLOBAL), then the repository's own (in `commonDir`). GIT_CONFIG_NOSYSTEM and
 * GIT_CONFIG_SYSTEM are honoured as git honours them.
 */
function configFiles(commonDir: string, env: GitEnv): string[] {
  const files: string[] = [];
  if (!/^(1|true|yes|on)$/i.test(env.GIT_CONFIG_NOSYSTEM ?? '')) files.push(env.GIT_CONFIG_SYSTEM || '/etc/gitconfig');
  if (env.GIT_CONFIG_GLOBAL !== undefined) {
    if (env.GIT_CONFIG_GLOBAL !== '' && env.GIT_CONFIG_GLOBAL !== '/dev/null') files.push(expandHome(env.GIT_CONFIG_GLOBAL, env));
  } else {
    files.push(xdgGitPath('config', env), join(home(env), '.gitconfig'));
  }
  files.push(join(commonDir, 'config'));
  return files;
}

/**
 * The last value of `section.key` (no subsection) across `files`, following `[include] path`
 * (relative to the including file; `includeIf` is not evaluated). Every file read or looked for
 * is added to `consulted`.
 */
function lastValue(files: readonly string[], section: string, key: string, env: GitEnv, consulted: string[]): string | undefined {
  let found: string | undefined;
  const visit = (file: string, depth: number): void => {
    consulted.push(file);
    const text = readRegularText(file, MAX_GIT_FILE_BYTES);
    if (text === undefined) return;
    for (const entry of parseGitConfig(text)) {
      if (entry.subsection !== undefined) continue;
      if (entry.section === 'include' && entry.key === 'path' && depth < MAX_INCLUDE_DEPTH && entry.value !== '') {
        const target = expandHome(entry.value, env);
        visit(isAbsolute(target) ? target : resolve(dirname(file), target), depth + 1);
      } else if (entry.section === section && entry.key === key) {
        found = entry.value;
      }
    }
  };
  for (const file of files) visit(file, 0);
  return found;
}

/**
 * The ignore files git applies to a repository beyond its `.gitignore` files, lowest priority
 * first: `core.excludesFile` (default `$XDG_CONFIG_HOME/git/ignore`), then `info/exclude` of the
 * repository's git dir (the common one, for a worktree). `consulted` lists every file whose change
 * could change them: the config files read or looked for, and the ignore files themselves (not
 * `.git` or HEAD, which change with every checkout).
 */
export interface GitExcludes {
  readonly global: string | undefined;
  readonly infoExclude: string | undefined;
  readonly consulted: readonly string[];
  /** The paths read to find the git dir (`.git`, HEAD, commondir): they change with checkouts, so they only serve to memoize. */
  readonly located: readonly string[];
}

/** Find the exclude files git would apply at `root` (none outside a git repository). */
export function gitExcludes(root: string, env: GitEnv = process.env): GitExcludes {
  const consulted: string[] = [];
  const located: string[] = [];
  const dirs = gitDirs(root, located);
  if (!dirs) return { global: undefined, infoExclude: undefined, consulted, located };
  const setting = lastValue(configFiles(dirs.common, env), 'core', 'excludesfile', env, consulted);
  let global: string | undefined;
  if (setting === undefined) global = xdgGitPath('ignore', env);
  else if (setting !== '') {
    const path = expandHome(setting, env);
    // A relative path is relative to the working tree, as git resolves it.
    global = isAbsolute(path) ? path : resolve(root, path);
  }
  const infoExclude = join(dirs.common, 'info', 'exclude');
  if (global) consulted.push(global);
  consulted.push(infoExclude);
  return { global, infoExclude, consulted: [...new Set(consulted)], located };
}
