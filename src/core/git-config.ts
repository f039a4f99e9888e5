import { dirname, isAbsolute, join, resolve } from 'node:path';
import { gitDirs } from './git.js';
import { readRegularText } from './open-regular.js';

/** Git config and ignore files larger than this are not read (no real one comes close). */
const MAX_GIT_FILE_BYTES = 1 << 20;
/** Include chains deeper than this are cut (git refuses a config past depth 10). */
const MAX_INCLUDE_DEPTH = 10;
/** At most this many config files are read for one lookup, includes and all: files that each include several others would otherwise multiply the reads at every level. */
const MAX_CONFIG_FILES = 50;

/** The environment the git files are found from (HOME, XDG_CONFIG_HOME, GIT_CONFIG_*). */
export type GitEnv = Readonly<Record<string, string | undefined>>;

/** The home folder, as git finds it: HOME, and none when it is unset or empty (then there is no global config). */
function home(env: GitEnv): string | undefined {
  return env.HOME || undefined;
}

/** `~/x` → the home folder's x, as git expands paths in config values. */
function expandHome(path: string, env: GitEnv): string | undefined {
  if (path !== '~' && !path.startsWith('~/')) return path;
  const dir = home(env);
  return dir === undefined ? undefined : join(dir, path.slice(2));
}

/** `$XDG_CONFIG_HOME/git/<name>`, or `~/.config/git/<name>` when the variable is unset or empty. */
function xdgGitPath(name: string, env: GitEnv): string | undefined {
  const dir = home(env);
  const base = env.XDG_CONFIG_HOME || (dir === undefined ? undefined : join(dir, '.config'));
  return base === undefined ? undefined : join(base, 'git', name);
}

/**
 * The value starting at `text[start]`, as git reads it: blanks at either end dropped, `"…"`
 * quoting, `\"` `\\` `\n` `\t` `\b` escapes, a backslash before the line end continuing the
 * value on the next line, and `#` or `;` outside quotes starting a comment (which a trailing
 * backslash does not continue). Returns the value and where the next line starts.
 */
function valueAt(text: string, start: number): { value: string; next: number } {
  let out = '';
  let quoted = false;
  let pendingSpace = '';
  let i = start;
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n' || (c === '\r' && text[i + 1] === '\n')) break;
    if (c === '\\' && i + 1 < text.length) {
      const next = text[++i]!;
      if (next === '\n') continue;
      if (next === '\r' && text[i + 1] === '\n') {
        i++;
        continue;
      }
      out += pendingSpace + (next === 'n' ? '\n' : next === 't' ? '\t' : next === 'b' ? '' : next);
      pendingSpace = '';
    } else if (c === '"') {
      out += pendingSpace;
      pendingSpace = '';
      quoted = !quoted;
    } else if (!quoted && (c === '#' || c === ';')) {
      while (i < text.length && text[i] !== '\n') i++;
      break;
    } else if (!quoted && (c === ' ' || c === '\t')) {
      if (out !== '') pendingSpace += c;
    } else {
      out += pendingSpace + c;
      pendingSpace = '';
    }
  }
  const newline = text.indexOf('\n', i);
  return { value: out, next: newline < 0 ? text.length : newline + 1 };
}

/** One `section[.subsection].key = value` of a config file, names lower-cased as git compares them. */
interface ConfigEntry {
  readonly section: string;
  readonly subsection: string | undefined;
  readonly key: string;
  /** The value; `true` for a key written without `=` (a boolean), which `bare` marks. */
  readonly value: string;
  readonly bare: boolean;
}

const HEADER = /^\[([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\\n]|\\.)*)")?\]/;
const KEY = /^([A-Za-z][A-Za-z0-9-]*)[ \t]*(=?)/;

/** The entries of a git config file's text, in order. Lines git would reject are skipped. */
export function parseGitConfig(text: string): ConfigEntry[] {
  const entries: ConfigEntry[] = [];
  let section = '';
  let subsection: string | undefined;
  let pos = 0;
  while (pos < text.length) {
    const newline = text.indexOf('\n', pos);
    const lineEnd = newline < 0 ? text.length : newline;
    let at = pos;
    pos = lineEnd + 1;
    while (at < lineEnd && (text[at] === ' ' || text[at] === '\t')) at++;
    if (text[at] === '[') {
      const header = HEADER.exec(text.slice(at, lineEnd));
      if (!header) {
        section = '';
        continue;
      }
      const name = header[1]!.toLowerCase();
      // `[section.sub]` is the old spelling of `[section "sub"]`.
      const dot = name.indexOf('.');
      section = dot < 0 ? name : name.slice(0, dot);
      subsection = header[2] !== undefined ? header[2].replace(/\\(.)/g, '$1') : dot < 0 ? undefined : name.slice(dot + 1);
      at += header[0].length;
      while (at < lineEnd && (text[at] === ' ' || text[at] === '\t')) at++;
    }
    if (at >= lineEnd || text[at] === '#' || text[at] === ';' || text[at] === '\r' || section === '') continue;
    const key = KEY.exec(text.slice(at, lineEnd));
    if (!key) continue;
    if (key[2] === '') {
      entries.push({ section, subsection, key: key[1]!.toLowerCase(), value: 'true', bare: true });
      continue;
    }
    const { value, next } = valueAt(text, at + key[0].length);
    entries.push({ section, subsection, key: key[1]!.toLowerCase(), value, bare: false });
    pos = next;
  }
  return entries;
}

/**
 * Every config file git reads for a repository, lowest priority first: system, global (XDG, then
 * `~/.gitconfig`, or GIT_CONFIG_GLOBAL), then the repository's own (in `commonDir`). GIT_CONFIG_NOSYSTEM and
 * GIT_CONFIG_SYSTEM are honoured as git honours them.
 */
function configFiles(commonDir: string, env: GitEnv): string[] {
  const files: (string | undefined)[] = [];
  if (!/^(1|true|yes|on)$/i.test(env.GIT_CONFIG_NOSYSTEM ?? '')) files.push(env.GIT_CONFIG_SYSTEM || '/etc/gitconfig');
  if (env.GIT_CONFIG_GLOBAL !== undefined) {
    if (env.GIT_CONFIG_GLOBAL !== '' && env.GIT_CONFIG_GLOBAL !== '/dev/null') files.push(expandHome(env.GIT_CONFIG_GLOBAL, env));
  } else {
    const dir = home(env);
    files.push(xdgGitPath('config', env), dir === undefined ? undefined : join(dir, '.gitconfig'));
  }
  files.push(join(commonDir, 'config'));
  return files.filter((file): file is string => file !== undefined);
}

/**
 * The last value of `section.key` (no subsection, written with `=`) across `files`, following
 * `[include] path` (relative to the including file; `includeIf` is not evaluated). A file already
 * on the include chain is not included again, and at most MAX_CONFIG_FILES are read. Every file
 * read or looked for is added to `consulted`.
 */
function lastValue(files: readonly string[], section: string, key: string, env: GitEnv, consulted: string[]): string | undefined {
  let found: string | undefined;
  let read = 0;
  const chain: string[] = [];
  const visit = (file: string): void => {
    if (read >= MAX_CONFIG_FILES || chain.includes(file) || chain.length > MAX_INCLUDE_DEPTH) return;
    read++;
    consulted.push(file);
    const text = readRegularText(file, MAX_GIT_FILE_BYTES);
    if (text === undefined) return;
    chain.push(file);
    for (const entry of parseGitConfig(text)) {
      if (entry.subsection !== undefined || entry.bare) continue;
      if (entry.section === 'include' && entry.key === 'path' && entry.value !== '') {
        const target = expandHome(entry.value, env);
        if (target !== undefined) visit(isAbsolute(target) ? target : resolve(dirname(file), target));
      } else if (entry.section === section && entry.key === key) {
        found = entry.value;
      }
    }
    chain.pop();
  };
  for (const file of files) visit(file);
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
  let located: string[] = [];
  const dirs = gitDirs(root, located);
  if (!dirs) return { global: undefined, infoExclude: undefined, consulted, located };
  // A `.git` folder's times change with every git command; only its turning into a file matters,
  // and its HEAD going missing (ENOTDIR) shows that.
  const dotGit = join(root, '.git');
  if (dirs.dir === dotGit) located = located.filter((path) => path !== dotGit);
  const setting = lastValue(configFiles(dirs.common, env), 'core', 'excludesfile', env, consulted);
  let global: string | undefined;
  if (setting === undefined) global = xdgGitPath('ignore', env);
  else if (setting !== '') {
    const path = expandHome(setting, env);
    // A relative path is relative to the working tree, as git resolves it.
    if (path !== undefined) global = isAbsolute(path) ? path : resolve(root, path);
  }
  const infoExclude = join(dirs.common, 'info', 'exclude');
  if (global) consulted.push(global);
  consulted.push(infoExclude);
  return { global, infoExclude, consulted: [...new Set(consulted)], located };
}
