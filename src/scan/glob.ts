import picomatch from 'picomatch';

/** A path filter as every `--glob` means it: dotfiles match, and a pattern without `/` matches the file name at any depth. */
export function globMatcher(glob: string): (path: string) => boolean {
  return picomatch(glob, { dot: true, basename: !glob.includes('/') });
}
