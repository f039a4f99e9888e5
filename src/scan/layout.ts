import { posix } from 'node:path';
import picomatch from 'picomatch';
import * as z from 'zod/mini';
import { isTestPath } from './test-paths.js';

/**
 * What a repository says about its own folders: which hold documentation sites, benchmarks,
 * project templates, examples and playgrounds rather than the code its packages are built from.
 * Learned at sync time from what the repository declares, so it needs no list kept by hand:
 *
 * - `.gitattributes`: `linguist-documentation`, `linguist-generated` and `linguist-vendored`
 *   (and their negations, which make a path source again), as GitHub reads them.
 * - JavaScript workspaces (`workspaces` in the root package.json, `pnpm-workspace.yaml`,
 *   `lerna.json`): a folder with a package.json that no workspace pattern takes in is a project
 *   kept inside the repository (a `create-*` template, an example app), not one of its packages;
 *   and where the workspace publishes packages, a private package that no other package depends
 *   on is an application around them (a docs site, a playground, a benchmark), not their code.
 *
 * Folder names (`docs/`, `bench/`, `templates/`) are the last resort, in `pathRole`.
 */
export type LayoutRole = 'docs' | 'bench' | 'template' | 'example' | 'generated' | 'vendored';

/** A learned role and why: `gitattributes`, `not-a-workspace-package`, `private-app`. */
export interface LayoutFolder {
  readonly folder: string;
  readonly role: LayoutRole;
  readonly why: 'not-a-workspace-package' | 'private-app';
}

export interface LayoutAttribute {
  /** A `.gitattributes` pattern, relative to the repository root. */
  readonly pattern: string;
  /** `source` for a negated attribute (`-linguist-generated`, `linguist-vendored=false`). */
  readonly role: LayoutRole | 'source';
}

export interface RepoLayout {
  /** The rules it was learned by (LAYOUT_VERSION; absent: the first rules): a layout learned by other rules is learned again. */
  readonly version?: number;
  /** Deepest first is how they are read; stored sorted by folder. */
  readonly folders: readonly LayoutFolder[];
  /** In file order; the last one that matches a path decides, as git reads them. */
  readonly attributes: readonly LayoutAttribute[];
}

/** Raised whenever what a layout is learned from, or how, changes. */
export const LAYOUT_VERSION = 2;

const ROLE_NAMES = ['docs', 'bench', 'template', 'example', 'generated', 'vendored'] as const satisfies readonly LayoutRole[];

/** A layout as an index stores it (meta.json, a database's repository row). */
export const LayoutSchema = z.object({
  version: z.optional(z.int()),
  folders: z.readonly(z.array(z.readonly(z.object({ folder: z.string(), role: z.enum(ROLE_NAMES), why: z.enum(['not-a-workspace-package', 'private-app']) })))),
  attributes: z.readonly(z.array(z.readonly(z.object({ pattern: z.string(), role: z.enum([...ROLE_NAMES, 'source']) })))),
});

/** Files a layout is learned from: a change to one of them means learning it again. */
export function isLayoutSource(path: string): boolean {
  const base = posix.basename(path);
  return base === 'package.json' || base === '.gitattributes' || path === 'pnpm-workspace.yaml' || path === 'lerna.json';
}

/** Manifests read at most (a monorepo with more package.json files is read this far, in path order). */
const MAX_MANIFESTS = 2000;
/** Manifests larger than this are not package manifests anyone writes by hand: skipped. */
const MAX_MANIFEST_BYTES = 256 * 1024;

/**
 * Learn a repository's layout from its files' paths and a reader for the few it needs (the
 * manifests and attribute files; `read` answers undefined for a file it cannot or may not read).
 */
export function learnLayout(paths: readonly string[], read: (path: string, maxBytes: number) => string | undefined): RepoLayout {
  const attributes: LayoutAttribute[] = [];
  // The root's is read even when the walk leaves it out of the catalogue (as it may leave out dotfiles).
  const attributeFiles = [...new Set(['.gitattributes', ...paths.filter((path) => posix.basename(path) === '.gitattributes')])].sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : 1));
  for (const file of attributeFiles) {
    const text = read(file, MAX_MANIFEST_BYTES);
    if (text !== undefined) attributes.push(...linguistRules(text, posix.dirname(file) === '.' ? '' : posix.dirname(file)));
  }
  return { version: LAYOUT_VERSION, folders: workspaceRoles(paths, read), attributes };
}

const LINGUIST: Readonly<Record<string, LayoutRole>> = { 'linguist-documentation': 'docs', 'linguist-generated': 'generated', 'linguist-vendored': 'vendored' };

/** The linguist rules of one `.gitattributes` (in the folder `base`). */
export function linguistRules(text: string, base: string): LayoutAttribute[] {
  const rules: LayoutAttribute[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('[attr]')) continue;
    const [pattern, ...attrs] = line.split(/\s+/);
    if (!pattern || pattern.startsWith('!')) continue;
    for (const attr of attrs) {
      const negated = attr.startsWith('-') || attr.startsWith('!');
      const [name, value] = (negated ? attr.slice(1) : attr).split('=');
      const role = LINGUIST[name!];
      if (!role) continue;
      const off = negated || value === 'false';
      rules.push({ pattern: anchored(pattern, base), role: off ? 'source' : role });
    }
  }
  return rules;
}

/** A `.gitattributes` pattern made relative to the root: one without a slash matches at any depth below its file. */
function anchored(pattern: string, base: string): string {
  const inner = pattern.replace(/^\//, '');
  const rooted = pattern.includes('/') && !pattern.endsWith('/') ? inner : `**/${inner.replace(/\/$/, '/**')}`;
  return base ? `${base}/${rooted}` : rooted;
}

interface Manifest {
  readonly folder: string;
  readonly name: string | undefined;
  readonly private: boolean;
  readonly dependsOn: readonly string[];
  readonly workspaces: readonly string[];
  /** It names a package, depends on one or runs scripts: a project, not a module-type marker. */
  readonly project: boolean;
}

function workspaceRoles(paths: readonly string[], read: (path: string, maxBytes: number) => string | undefined): LayoutFolder[] {
  const manifestPaths = paths.filter((path) => posix.basename(path) === 'package.json' && !isTestPath(path)).sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : 1)).slice(0, MAX_MANIFESTS);
  const root = manifestPaths[0] === 'package.json' ? manifest('package.json', read) : undefined;
  const patterns = [...(root?.workspaces ?? []), ...pnpmWorkspaces(read('pnpm-workspace.yaml', MAX_MANIFEST_BYTES)), ...lernaPackages(read('lerna.json', MAX_MANIFEST_BYTES))];
  if (patterns.length === 0) return [];
  const included = patterns.filter((p) => !p.startsWith('!')).map((p) => picomatch(p.replace(/^\.\//, '').replace(/\/$/, ''), { dot: true }));
  const excluded = patterns.filter((p) => p.startsWith('!')).map((p) => picomatch(p.slice(1).replace(/^\.\//, '').replace(/\/$/, ''), { dot: true }));
  const isMember = (folder: string): boolean => included.some((match) => match(folder)) && !excluded.some((match) => match(folder));
  const roles: LayoutFolder[] = [];
  const members: Manifest[] = [];
  for (const path of manifestPaths) {
    const folder = posix.dirname(path);
    if (folder === '.') continue;
    if (!isMember(folder)) {
      // Inside a folder already given a role, a nested project is part of it. A package.json that
      // names nothing, depends on nothing and runs nothing ({"type": "module"} beside some source)
      // marks how its folder's files load, not a project.
      if (roles.some((role) => folder.startsWith(`${role.folder}/`)) || !manifest(path, read)?.project) continue;
      roles.push({ folder, role: byName(folder) ?? 'example', why: 'not-a-workspace-package' });
      continue;
    }
    const found = manifest(path, read);
    if (found) members.push(found);
  }
  // Only where the workspace publishes packages is an unpublished leaf something around them; in
  // a workspace of applications (every package private), the applications are the code.
  // A private package beside published ones under the same workspace pattern (`packages/*`) is
  // more likely published elsewhere (an editor extension) or shared code: only its name can say.
  if (members.some((member) => !member.private)) {
    const needed = new Set(members.flatMap((member) => member.dependsOn));
    const patternOf = (folder: string): number => included.findIndex((match) => match(folder));
    const publishing = new Set(members.filter((member) => !member.private).map((member) => patternOf(member.folder)));
    for (const member of members) {
      if (!member.private || (member.name !== undefined && needed.has(member.name))) continue;
      const named = byName(member.folder);
      if (named === undefined && publishing.has(patternOf(member.folder))) continue;
      roles.push({ folder: member.folder, role: named ?? 'example', why: 'private-app' });
    }
  }
  return roles.sort((a, b) => (a.folder < b.folder ? -1 : a.folder > b.folder ? 1 : 0));
}

function manifest(path: string, read: (path: string, maxBytes: number) => string | undefined): Manifest | undefined {
  const text = read(path, MAX_MANIFEST_BYTES);
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const json = parsed as Record<string, unknown>;
  const dependsOn = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'].flatMap((field) => {
    const deps = json[field];
    return typeof deps === 'object' && deps !== null ? Object.keys(deps) : [];
  });
  const spaces = json.workspaces;
  const workspaces = Array.isArray(spaces) ? spaces : typeof spaces === 'object' && spaces !== null && Array.isArray((spaces as { packages?: unknown }).packages) ? (spaces as { packages: unknown[] }).packages : [];
  return {
    folder: posix.dirname(path),
    name: typeof json.name === 'string' ? json.name : undefined,
    private: json.private === true,
    dependsOn,
    workspaces: workspaces.filter((w): w is string => typeof w === 'string'),
    project: typeof json.name === 'string' || dependsOn.length > 0 || (typeof json.scripts === 'object' && json.scripts !== null),
  };
}

/** The `packages:` list of a pnpm-workspace.yaml (the only part of it read). */
export function pnpmWorkspaces(text: string | undefined): string[] {
  if (text === undefined) return [];
  const out: string[] = [];
  let inPackages = false;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+#.*$/, '');
    if (/^\S/.test(line)) {
      inPackages = /^packages\s*:/.test(line);
      continue;
    }
    const item = inPackages ? /^\s+-\s*(.+?)\s*$/.exec(line) : null;
    if (item) out.push(item[1]!.replace(/^['"]|['"]$/g, ''));
  }
  return out;
}

function lernaPackages(text: string | undefined): string[] {
  if (text === undefined) return [];
  try {
    const parsed = JSON.parse(text) as { packages?: unknown };
    return Array.isArray(parsed.packages) ? parsed.packages.filter((p): p is string => typeof p === 'string') : [];
  } catch {
    return [];
  }
}

const BY_NAME: readonly (readonly [RegExp, LayoutRole])[] = [
  [/(^|\/)(docs?|documentation|website|www|site|sites)(\/|$)/i, 'docs'],
  [/(^|\/)(bench|benches|benchmarks?|perf)(\/|$)/i, 'bench'],
  [/(^|\/)(templates?|scaffolds?|boilerplates?|starters?)(-[^/]+)?(\/|$)/i, 'template'],
  [/(^|\/)(examples?|samples?|demos?|playgrounds?|sandbox)(\/|$)/i, 'example'],
];

/**
 * A folder's role by the names along its path (what a learned folder is, when its name says).
 * Wider than pathRole's folder names (`www`, `site`, `starter`): here the manifests have already
 * said the folder is not package code, and the name only says which kind; pathRole's names decide
 * on their own, where `src/site/` may well be code.
 */
function byName(folder: string): LayoutRole | undefined {
  for (const [pattern, role] of BY_NAME) if (pattern.test(folder)) return role;
  return undefined;
}

function depth(path: string): number {
  let n = 0;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 47) n++;
  return n;
}

/** Reads a layout: the role it gives each path, or undefined where it says nothing. */
export function layoutReader(layout: RepoLayout): (path: string) => LayoutRole | 'source' | undefined {
  const attributes = layout.attributes.map((rule) => ({ match: picomatch(rule.pattern, { dot: true }), role: rule.role }));
  const folders = [...layout.folders].sort((a, b) => b.folder.length - a.folder.length);
  return (path) => {
    for (let i = attributes.length - 1; i >= 0; i--) if (attributes[i]!.match(path)) return attributes[i]!.role;
    for (const folder of folders) if (path.startsWith(folder.folder) && path.charCodeAt(folder.folder.length) === 47) return folder.role;
    return undefined;
  };
}
