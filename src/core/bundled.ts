import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * A separately bundled script next to this module when running from the build (dist/parse-worker.js,
 * dist/mcp-server.js, whether the bundler left this module in dist/ or in a chunk under it); none
 * from sources.
 */
export function bundledScript(name: string): URL | undefined {
  for (const relative of [`./${name}`, `../${name}`]) {
    const url = new URL(relative, import.meta.url);
    if (url.protocol === 'file:' && existsSync(fileURLToPath(url))) return url;
  }
  return undefined;
}
