// An import graph of a source tree, by pattern (no parser): enough to measure whether import
// neighbours and centrality help ranking before building them into the index. Each repository's
// languages resolve their own way: relative specifiers (JS/TS), module paths (Python, Java),
// package directories (Go), `mod`/`use crate::` (Rust). Unresolved imports (packages) are dropped.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const JS = /\b(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]|\brequire\s*\(\s*['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm;
const PY = /^\s*from\s+(\.*[\w.]*)\s+import\s+([\w, ()*]+)|^\s*import\s+([\w.]+)/gm;
const JAVA = /^\s*import\s+(?:static\s+)?([\w.]+)\s*;/gm;
const GO_BLOCK = /^\s*import\s*\(([\s\S]*?)\)|^\s*import\s+(?:\w+\s+)?"([^"]+)"/gm;
const RUST = /^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;|\buse\s+(crate|super|self)::([\w:]+)/gm;

/** files: repository-relative paths. Returns Map<file, Set<file>> of resolved imports. */
export function importGraph(dir, files) {
  const set = new Set(files);
  const bySuffix = new Map(); // last two path segments → files, for module lookups
  for (const f of files) {
    const parts = f.split('/');
    for (let k = 1; k <= Math.min(4, parts.length); k++) {
      const key = parts.slice(-k).join('/');
      if (!bySuffix.has(key)) bySuffix.set(key, []);
      bySuffix.get(key).push(f);
    }
  }
  const dirs = new Map();
  for (const f of files) {
    const d = path.posix.dirname(f);
    if (!dirs.has(d)) dirs.set(d, []);
    dirs.get(d).push(f);
  }
  const suffix = (rel) => bySuffix.get(rel) ?? [];
  const graph = new Map();
  for (const file of files) {
    let text;
    try {
      text = readFileSync(path.join(dir, file), 'utf8');
    } catch {
      continue;
    }
    if (text.length > 1_000_000) continue;
    const out = new Set();
    const ext = path.posix.extname(file);
    const here = path.posix.dirname(file);
    const add = (targets) => {
      for (const t of targets) if (t !== file) out.add(t);
    };
    if (/^\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/.test(ext)) {
      for (const m of text.matchAll(JS)) {
        const spec = m[1] ?? m[2] ?? m[3] ?? m[4];
        if (!spec || !spec.startsWith('.')) continue;
        const base = path.posix.normalize(path.posix.join(here, spec)).replace(/\.(js|mjs|cjs|jsx)$/, '');
        const tries = ['', '.ts', '.tsx', '.js', '.jsx', '.mjs', '.cjs', '.mts', '.cts', '/index.ts', '/index.tsx', '/index.js'].map((e) => base + e);
        add(tries.filter((t) => set.has(t)).slice(0, 1));
      }
    } else if (ext === '.py' || ext === '.pyi') {
      for (const m of text.matchAll(PY)) {
        const mods = [];
        if (m[1] !== undefined) {
          const dots = /^\.*/.exec(m[1])[0].length;
          const rest = m[1].slice(dots).replaceAll('.', '/');
          let baseDir = '';
          if (dots > 0) {
            baseDir = here;
            for (let i = 1; i < dots; i++) baseDir = path.posix.dirname(baseDir);
          }
          const prefix = [baseDir, rest].filter(Boolean).join('/');
          mods.push(prefix);
          for (const name of m[2].replace(/[()]/g, '').split(',')) if (name.trim() && name.trim() !== '*') mods.push(`${prefix}/${name.trim().split(/\s+/)[0]}`);
          for (const mod of mods) {
            if (dots > 0) add([`${mod}.py`, `${mod}/__init__.py`].filter((t) => set.has(t)));
            else add([...suffix(`${mod}.py`), ...suffix(`${mod}/__init__.py`)].slice(0, 3));
          }
        } else {
          const mod = m[3].replaceAll('.', '/');
          add([...suffix(`${mod}.py`), ...suffix(`${mod}/__init__.py`)].slice(0, 3));
        }
      }
    } else if (ext === '.java') {
      for (const m of text.matchAll(JAVA)) {
        const parts = m[1].split('.');
        for (let k = parts.length; k >= 2; k--) {
          const hit = suffix(`${parts.slice(Math.max(0, k - 4), k).join('/')}.java`);
          if (hit.length > 0) {
            add(hit.slice(0, 3));
            break;
          }
        }
      }
    } else if (ext === '.go') {
      for (const m of text.matchAll(GO_BLOCK)) {
        const specs = m[1] ? [...m[1].matchAll(/"([^"]+)"/g)].map((x) => x[1]) : [m[2]];
        for (const spec of specs) {
          const parts = spec.split('/');
          for (let k = Math.min(3, parts.length); k >= 1; k--) {
            const d = parts.slice(-k).join('/');
            const matches = [...dirs.keys()].filter((x) => x === d || x.endsWith(`/${d}`));
            if (matches.length === 1) {
              add(dirs.get(matches[0]).filter((f) => f.endsWith('.go') && !f.endsWith('_test.go')));
              break;
            }
          }
        }
      }
    } else if (ext === '.rs') {
      const crateRoot = file.includes('/src/') ? file.slice(0, file.lastIndexOf('/src/') + 4) : path.posix.dirname(file);
      for (const m of text.matchAll(RUST)) {
        if (m[1]) {
          const stem = path.posix.basename(file, '.rs');
          const base = stem === 'mod' || stem === 'lib' || stem === 'main' ? here : `${here}/${stem}`;
          add([`${base}/${m[1]}.rs`, `${base}/${m[1]}/mod.rs`, `${here}/${m[1]}.rs`].filter((t) => set.has(t)).slice(0, 1));
        } else {
          const segs = m[3].split('::');
          const from = m[2] === 'crate' ? crateRoot : here;
          for (let k = segs.length; k >= 1; k--) {
            const p = `${from}/${segs.slice(0, k).join('/')}`;
            const hit = [`${p}.rs`, `${p}/mod.rs`].filter((t) => set.has(t));
            if (hit.length > 0) {
              add(hit.slice(0, 1));
              break;
            }
          }
        }
      }
    }
    graph.set(file, out);
  }
  return graph;
}

/** In-degree of every file, and undirected neighbours. */
export function graphFacts(graph) {
  const indegree = new Map();
  const neighbours = new Map();
  const link = (a, b) => {
    if (!neighbours.has(a)) neighbours.set(a, new Set());
    neighbours.get(a).add(b);
  };
  for (const [from, tos] of graph) {
    for (const to of tos) {
      indegree.set(to, (indegree.get(to) ?? 0) + 1);
      link(from, to);
      link(to, from);
    }
  }
  return { indegree, neighbours };
}
