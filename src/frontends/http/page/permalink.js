/**
 * Permalinks: `#repo/path:L10-L20` names a file view (a repository by name, or by id when names
 * repeat; the path as the repository spells it; the lines highlighted).
 */

/** The hash for a view of `path` in `repo` with lines `start..end` highlighted (either may be absent). */
export function permalink(repo, path, start, end) {
  const lines = start ? (end && end !== start ? `:L${start}-L${end}` : `:L${start}`) : '';
  return `#${encodeURIComponent(repo)}/${path.split('/').map(encodeURIComponent).join('/')}${lines}`;
}

/** The view a hash names: `{repo, path, start?, end?}`, or null when it names none. */
export function parsePermalink(hash) {
  const text = hash.replace(/^#/, '');
  const slash = text.indexOf('/');
  if (slash <= 0) return null;
  let rest = text.slice(slash + 1);
  let start;
  let end;
  const lines = /:L(\d+)(?:-L?(\d+))?$/.exec(rest);
  if (lines) {
    start = Number(lines[1]);
    end = lines[2] ? Number(lines[2]) : start;
    if (end < start) [start, end] = [end, start];
    rest = rest.slice(0, lines.index);
  }
  try {
    const repo = decodeURIComponent(text.slice(0, slash));
    const path = rest.split('/').map(decodeURIComponent).join('/');
    return path ? { repo, path, start, end } : null;
  } catch {
    return null;
  }
}
